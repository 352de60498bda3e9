/* Draw the page's mermaid diagrams with the UMD build loaded before this file (ext/offline.py).
 * Always in mermaid's light theme: in dark mode the theme (pydata-sphinx-theme) inverts
 * `pre.mermaid > svg` with a CSS filter, so a dark mermaid theme would be inverted twice. */
document.addEventListener("DOMContentLoaded", async () => {
  "use strict";
  window.mermaid.initialize({ startOnLoad: false, theme: "default" });
  try {
    await window.mermaid.run({ querySelector: "pre.mermaid" });
  } catch (error) {
    console.error("mermaid could not draw a diagram:", error);
  }
  // mermaid scales a diagram down to the column's width, which shrinks the labels of a wide
  // graph below reading size. Keep each at its natural size; a wide one scrolls sideways.
  for (const svg of document.querySelectorAll("pre.mermaid > svg")) {
    const width = svg.viewBox.baseVal && svg.viewBox.baseVal.width;
    if (width) {
      svg.style.maxWidth = "none";
      svg.style.width = `${width}px`;
    }
  }
});
