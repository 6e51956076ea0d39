// Entry point: mounts the reviewer UI, or, on the desktop app's own
// connection page (gatehouse://localhost/), the connection screen. Styles
// come from app.css as a file, never inline (the content security policy
// forbids that). The theme is applied before anything mounts, so the page
// never flashes the other one.

import { mount } from "svelte";
import "./app.css";
import App from "./App.svelte";
import { appInvoke, Connection, isConnectionPage } from "./lib/desktop/connection";
import ConnectionPage from "./lib/desktop/ConnectionPage.svelte";
import { ThemeState } from "./lib/theme.svelte";

const theme = new ThemeState(window);
const target = document.getElementById("app");
if (!target) throw new Error("index.html lacks #app");

export default isConnectionPage(window.location)
  ? mount(ConnectionPage, { target, props: { connection: new Connection(appInvoke()) } })
  : mount(App, { target, props: { theme } });
