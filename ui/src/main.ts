// Entry point: mounts the reviewer UI, or, on the desktop app's own
// connection page (gatehouse://localhost/), the connection screen. Styles
// come from app.css as a file, never inline (the content security policy
// forbids that).

import { mount } from "svelte";
import "./app.css";
import App from "./App.svelte";
import { appInvoke, Connection, isConnectionPage } from "./lib/desktop/connection";
import ConnectionPage from "./lib/desktop/ConnectionPage.svelte";

const target = document.getElementById("app");
if (!target) throw new Error("index.html lacks #app");

export default isConnectionPage(window.location)
  ? mount(ConnectionPage, { target, props: { connection: new Connection(appInvoke()) } })
  : mount(App, { target });
