/** The web chat's HTML: a sign-in form that works without script, and the shell the page script draws into. */

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function document(title: string, body: string, bodyAttrs = ""): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/assets/app.css">
</head>
<body${bodyAttrs}>
${body}
</body>
</html>
`;
}

/** The sign-in page; `problem` is one of our own fixed lines (escaped anyway). */
export function signInPage(problem?: string): string {
  return document(
    "chatbot · sign in",
    `<main class="signin">
<h1>chatbot</h1>
<form method="post" action="/login">
<label>Name <input name="name" autocomplete="username" required maxlength="64"></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required maxlength="512"></label>
${problem ? `<p class="problem" role="alert">${escapeHtml(problem)}</p>` : ""}
<button type="submit">Sign in</button>
</form>
</main>`,
  );
}

/** The page the script fills: `chat` or `console`. */
export function appShell(page: "chat" | "console"): string {
  return document(
    page === "chat" ? "chatbot" : "chatbot · console",
    `<noscript>This page needs JavaScript.</noscript>\n<script type="module" src="/assets/app.js"></script>`,
    ` data-page="${page}"`,
  );
}
