// Entry point: mounts the reviewer UI. Styles come from app.css as a file,
// never inline (the server's content security policy forbids that).

import { mount } from "svelte";
import "./app.css";
import App from "./App.svelte";

const target = document.getElementById("app");
if (!target) throw new Error("index.html lacks #app");

export default mount(App, { target });
