/* Render the page's mermaid diagrams with the UMD build loaded before this file (ext/offline.py).
 * Each <pre class="mermaid"> keeps its source so the diagrams can be drawn again in the other
 * colour scheme when the reader switches the theme between light and dark. */
(() => {
  "use strict";
  let drawnIn = null;

  const scheme = () => (document.documentElement.dataset.theme === "dark" ? "dark" : "default");

  const draw = async () => {
    const wanted = scheme();
    if (wanted === drawnIn) return;
    drawnIn = wanted;
    const blocks = document.querySelectorAll("pre.mermaid");
    for (const block of blocks) {
      if (block.dataset.source === undefined) block.dataset.source = block.textContent;
      block.removeAttribute("data-processed");
      block.textContent = block.dataset.source;
    }
    window.mermaid.initialize({ startOnLoad: false, theme: wanted });
    try {
      await window.mermaid.run({ nodes: blocks });
    } catch (error) {
      console.error("mermaid could not draw a diagram:", error);
    }
  };

  document.addEventListener("DOMContentLoaded", () => {
    draw();
    new MutationObserver(draw).observe(document.documentElement, {
      attributes: true,
      attributeFilter: ["data-theme"],
    });
  });
})();
