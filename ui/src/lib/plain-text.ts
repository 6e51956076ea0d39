// Agents write markdown; a one-line preview (the panel's rows, the runs'
// titles) shows it as the words a reader would see: no `**`, backticks,
// heading marks, list bullets or link targets. Text only: the result is
// rendered as text, never as HTML.

/** `markdown` as plain text on one line. */
export function plainText(markdown: string): string {
  return (
    markdown
      // Images and links keep their words: ![alt](src) → alt, [text](url) → text.
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/\[([^\]]+)\]\([^)]*\)/g, "$1")
      // Code spans keep their content; fences lose their marks.
      .replace(/```[^\n]*\n?/g, "")
      .replace(/`+([^`]*)`+/g, "$1")
      // Block marks at the start of a line: headings, quotes, bullets, numbers.
      .replace(/^[ \t]*#{1,6}[ \t]+/gm, "")
      .replace(/^[ \t]*>[ \t]?/gm, "")
      .replace(/^[ \t]*[-*+][ \t]+(\[[ xX]\][ \t]+)?/gm, "")
      .replace(/^[ \t]*(\d+)[.)][ \t]+/gm, "$1. ")
      // Emphasis: **strong**, __strong__, *em*, _em_, ~~struck~~ (not a lone * or snake_case).
      .replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, "$2")
      .replace(/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?!\w)/g, "$1$2")
      .replace(/(^|[^\w])_(?=\S)([^_\n]*?\S)_(?!\w)/g, "$1$2")
      .replace(/~~(?=\S)([\s\S]*?\S)~~/g, "$1")
      .replace(/\s+/g, " ")
      .trim()
  );
}
