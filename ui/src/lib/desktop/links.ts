// Links that open a new tab (every link in an agent's text does) are, in the
// desktop window, followed in the window itself. The app lets the window
// load only Gatehouse's own pages: it turns the link away and opens it in
// the reviewer's browser (src-tauri/src/window.rs). That navigation guard
// sees every page load, whereas WebKit's new-window request is skipped
// while the window is driven by WebDriver, so links take the one path that
// the desktop end-to-end test can follow too.

/** Follows new-tab links in place from now on; returns how to stop. */
export function followNewTabLinksInPlace(doc: Document): () => void {
  const onclick = (e: MouseEvent): void => {
    if (e.defaultPrevented || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    const link = e.target instanceof Element ? e.target.closest("a[href][target='_blank']") : null;
    if (!(link instanceof HTMLAnchorElement)) return;
    e.preventDefault();
    doc.defaultView?.location.assign(link.href);
  };
  doc.addEventListener("click", onclick);
  return () => doc.removeEventListener("click", onclick);
}
