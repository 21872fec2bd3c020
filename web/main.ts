/** The page script: the chat or the console, as the server's shell says (`<body data-page>`). */
import "./style.css";
import { me } from "./api.js";
import { startChat } from "./chat.js";
import { startConsole } from "./console.js";

void me().then((who) => {
  if (document.body.dataset.page === "console") startConsole(who);
  else startChat(who);
});
