// A Worker for pages opened from disk. Chromium refuses `new Worker(url)` on a file:// page, and
// the theme's search runs in a worker; Material's offline plugin would load a shim for that from
// unpkg.com (naming this file "iframe-worker" keeps it from doing so: nothing is fetched from the
// network). Here the worker's script runs in a hidden iframe of the page's own origin instead,
// and messages cross as events. Only what the search worker uses is implemented: postMessage
// both ways, message listeners, onmessage and terminate.
(function () {
  "use strict";
  if (location.protocol !== "file:") {
    return;
  }

  function IframeWorker(url) {
    var target = document.createDocumentFragment(); // an EventTarget for our listeners
    var worker = this;
    var queue = [];
    var loaded = false;
    var frame = document.createElement("iframe");
    frame.hidden = true;
    document.body.appendChild(frame);
    var inner = frame.contentWindow;

    this.onmessage = null;
    this.onerror = null;
    this.addEventListener = target.addEventListener.bind(target);
    this.removeEventListener = target.removeEventListener.bind(target);

    // the worker's postMessage: to our listeners, later, as a worker's would arrive
    inner.postMessage = function (data) {
      setTimeout(function () {
        var event = new MessageEvent("message", { data: data });
        if (typeof worker.onmessage === "function") {
          worker.onmessage(event);
        }
        target.dispatchEvent(event);
      }, 0);
    };
    inner.importScripts = function () {
      throw new Error("importScripts is not available to a worker of a page opened from disk");
    };

    function deliver(data) {
      inner.dispatchEvent(new inner.MessageEvent("message", { data: data }));
    }

    this.postMessage = function (data) {
      if (loaded) {
        setTimeout(function () { deliver(data); }, 0);
      } else {
        queue.push(data);
      }
    };
    this.terminate = function () {
      frame.remove();
    };

    var script = inner.document.createElement("script");
    script.src = new URL(url, location.href).href;
    script.onload = function () {
      loaded = true;
      queue.splice(0).forEach(deliver);
    };
    script.onerror = function () {
      var event = new Event("error");
      if (typeof worker.onerror === "function") {
        worker.onerror(event);
      }
      target.dispatchEvent(event);
    };
    inner.document.head.appendChild(script);
  }

  window.Worker = IframeWorker;
})();
