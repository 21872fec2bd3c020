/** The model server's root: an OpenAI-compatible base URL without its trailing `/v1` (`http://h:8080/v1` → `http://h:8080`). */
export function serverRoot(baseURL: string): string {
  return baseURL.replace(/\/+$/, "").replace(/\/v1$/, "");
}
