// Typesets the maths of the notebook pages with the copy of MathJax 3 that docs/hooks.py puts on the site
// (assets/mathjax/, from the django-static-mathjax package): nothing is fetched from the network.
//
// mkdocs-jupyter's page template loads this script where it would load MathJax (custom_mathjax_url in
// mkdocs.yml), then runs an inline MathJax 2 configuration that does nothing while window.MathJax is
// undefined. So the MathJax 3 configuration (the same delimiters as Jupyter's: $...$, $$...$$, \(...\),
// \[...\]) is set, and MathJax loaded, once the page is parsed.
(function () {
  var here = document.currentScript.src;
  document.addEventListener("DOMContentLoaded", function () {
    if (window.MathJax) return;
    window.MathJax = {
      tex: {
        inlineMath: [["$", "$"], ["\\(", "\\)"]],
        displayMath: [["$$", "$$"], ["\\[", "\\]"]],
        processEscapes: true,
        processEnvironments: true,
        tags: "ams",
      },
      options: { enableMenu: false },
    };
    var script = document.createElement("script");
    script.src = new URL("mathjax/tex-chtml-full.js", here).href;
    script.async = true;
    document.head.appendChild(script);
  });
})();
