/* Draw the page's mermaid diagrams with the UMD build loaded before this file (ext/offline.py).
 * Always in mermaid's light theme: in dark mode the theme (pydata-sphinx-theme) inverts
 * `pre.mermaid > svg` with a CSS filter, so a dark mermaid theme would be inverted twice.
 * A diagram is scaled down to the text column (useMaxWidth), never up; tight spacing and labels
 * wrapped at 110 px keep the chapter graph narrow enough to stay readable on a phone
 * (tests/test_site_e2e.py measures every node at a desktop and a phone width). */
document.addEventListener("DOMContentLoaded", async () => {
  "use strict";
  window.mermaid.initialize({
    startOnLoad: false,
    theme: "default",
    flowchart: { useMaxWidth: true, nodeSpacing: 16, rankSpacing: 16, padding: 4, wrappingWidth: 110 },
  });
  try {
    await window.mermaid.run({ querySelector: "pre.mermaid" });
  } catch (error) {
    console.error("mermaid could not draw a diagram:", error);
  }
});
