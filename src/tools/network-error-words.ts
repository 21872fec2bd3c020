/** Network error codes (Node and undici) in words a model and a user understand. */

const WORDS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "DNS lookup failed",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  UND_ERR_SOCKET: "connection closed by the server",
  UND_ERR_CONNECT_TIMEOUT: "connection timed out",
};

/** The words for a network error code, or the code itself when it is not a common one. */
export function networkErrorWords(code: string): string {
  return WORDS[code] ?? code;
}
