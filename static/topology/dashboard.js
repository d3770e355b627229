// Topolens dashboard: draw the server-built Plotly figures, keep them live, let
// a click on the overview heatmap open its node. No framework, no network but our own.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  var CONFIG = {
    displaylogo: false,
    responsive: true,
    modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"],
    toImageButtonOptions: { format: "png", scale: 2 }
  };
  var PAUSE_KEY = "topolens.live.paused";

  // Set once the first chart has drawn: the benchmark reads it.
  window.topolens = { firstDraw: null, refreshes: 0, scriptStart: performance.now() };

  function readFigure(container) {
    var source = document.getElementById(container.dataset.figure);
    return source ? JSON.parse(source.textContent) : null;
  }

  function markDrawn() {
    if (window.topolens.firstDraw === null) {
      window.topolens.firstDraw = performance.now();
      document.documentElement.dataset.chartsDrawn = "true";
    }
  }

  function openNodeOnClick(container, figure) {
    var meta = (figure.layout || {}).meta || {};
    var holder = container.closest("[data-node-url]");
    if (meta.kind !== "zone-heatmap" || !holder) return;
    container.on("plotly_click", function (event) {
      var point = event.points && event.points[0];
      if (point && typeof point.x === "string") {
        window.location.href = holder.dataset.nodeUrl.replace("__node__", encodeURIComponent(point.x));
      }
    });
  }

  function drawAll() {
    if (!window.Plotly) return;
    var containers = document.querySelectorAll("[data-figure]");
    containers.forEach(function (container) {
      var figure = readFigure(container);
      if (!figure) return;
      window.Plotly.newPlot(container, figure.data, figure.layout, CONFIG).then(function () {
        markDrawn();
        openNodeOnClick(container, figure);
      });
    });
  }

  function applyPayload(payload) {
    var figures = payload.figures || {};
    Object.keys(figures).forEach(function (id) {
      var container = document.getElementById(id);
      if (container && window.Plotly) {
        window.Plotly.react(container, figures[id].data, figures[id].layout, CONFIG);
      }
    });
    var html = (payload.data || {}).html || {};
    Object.keys(html).forEach(function (id) {
      var target = document.getElementById(id);
      if (target) target.innerHTML = html[id];
    });
  }

  function setupLive() {
    var live = document.querySelector("[data-live-url]");
    if (!live) return;
    var button = document.getElementById("live-toggle");
    var status = document.getElementById("live-status");
    var interval = (parseInt(live.dataset.liveInterval, 10) || 15) * 1000;
    var paused = window.localStorage.getItem(PAUSE_KEY) === "true";

    function show() {
      button.setAttribute("aria-pressed", paused ? "true" : "false");
      button.textContent = paused ? "Resume live refresh" : "Pause live refresh";
    }

    function refresh() {
      if (paused || document.hidden) return;
      fetch(live.dataset.liveUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) {
          if (!response.ok) throw new Error("HTTP " + response.status);
          return response.json();
        })
        .then(function (payload) {
          applyPayload(payload);
          window.topolens.refreshes += 1;
          status.textContent = "live: updated " + new Date().toLocaleTimeString();
        })
        .catch(function (error) {
          status.textContent = "live: refresh failed (" + error.message + "), retrying";
        });
    }

    button.addEventListener("click", function () {
      paused = !paused;
      window.localStorage.setItem(PAUSE_KEY, paused ? "true" : "false");
      status.textContent = paused ? "live: paused" : "live: every " + interval / 1000 + " s";
      show();
      if (!paused) refresh();
    });
    show();
    if (paused) status.textContent = "live: paused";
    window.setInterval(refresh, interval);
    window.topolens.refreshNow = refresh;
  }

  document.addEventListener("DOMContentLoaded", function () {
    drawAll();
    setupLive();
  });
})();
