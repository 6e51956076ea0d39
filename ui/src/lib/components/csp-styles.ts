// CodeMirror under a strict content security policy. CodeMirror (through
// style-mod) puts its styles in a <style> element when mounted in a
// document, which `style-src 'self'` forbids; in a shadow root it uses a
// constructable stylesheet (`adoptedStyleSheets`), which is CSSOM and
// allowed. This routes document mounts the same way, so the editor is
// styled without loosening the policy. Install once, before the first
// EditorView.

import { StyleModule } from "style-mod";

let installed = false;

export function adoptEditorStyles(doc: Document = document): void {
  if (installed || !("adoptedStyleSheets" in doc)) return;
  installed = true;
  // Looks like a shadow root to style-mod (no `head`), backed by the document's sheets.
  const root = {
    ownerDocument: doc,
    get adoptedStyleSheets() {
      return doc.adoptedStyleSheets;
    },
    set adoptedStyleSheets(sheets: CSSStyleSheet[]) {
      doc.adoptedStyleSheets = sheets;
    },
  } as unknown as ShadowRoot;
  const mount = StyleModule.mount.bind(StyleModule);
  StyleModule.mount = (target, modules, options) => mount(target === doc ? root : target, modules, options);
}
