/** The page's calls to its server: same origin, the session cookie, and the CSRF token on every write. */

/** Who is signed in (from `/api/me`). */
export interface Me {
  name: string;
  admin: boolean;
  csrf: string;
  /** The conversation's `/reasoning`: hidden, folded (the default) or open. */
  reasoning: "off" | "collapsed" | "full";
}

/** Reads who is signed in; a lost session sends the browser to the sign-in page. */
export async function me(): Promise<Me> {
  const res = await fetch("/api/me", { credentials: "same-origin" });
  if (res.status === 401) {
    location.assign("/login");
    throw new Error("signed out");
  }
  return (await res.json()) as Me;
}

/** GETs JSON from the API. */
export async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { credentials: "same-origin" });
  if (res.status === 401) location.assign("/login");
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** POSTs JSON with the session's CSRF token. */
export async function postJson<T>(who: Me, path: string, body: unknown = {}): Promise<T> {
  const res = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", "x-csrf-token": who.csrf },
    body: JSON.stringify(body),
  });
  if (res.status === 401) location.assign("/login");
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
  return (await res.json()) as T;
}
