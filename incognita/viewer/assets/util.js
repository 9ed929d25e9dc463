/* Shared helpers of the viewer. Classic scripts only: browsers refuse ES modules from file://,
   so every file adds to one global namespace, V. */
"use strict";
(function () {
  window.V = window.V || {};

  /* Build an element. Strings become text nodes, never HTML: episodes hold arbitrary model
     output, so nothing inserted here can turn into markup. */
  V.h = function (tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
      else if (name === "class") el.className = value;
      else el.setAttribute(name, value === true ? "" : String(value));
    }
    V.append(el, children);
    return el;
  };

  V.append = function (el, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  };

  V.isMissing = (v) => v === null || v === undefined || (typeof v === "number" && Number.isNaN(v));

  /* Numbers as the tables show them; the kind comes from the column description. */
  V.fmt = function (value, kind) {
    if (V.isMissing(value)) return "–";
    if (kind === "frac") return value.toFixed(2);
    if (kind === "usd") return value === 0 ? "0" : "$" + value.toFixed(value < 0.01 ? 4 : 2);
    if (kind === "num" && !Number.isInteger(value)) return value.toFixed(Math.abs(value) < 10 ? 3 : 1);
    return String(value);
  };

  /* A value as one line of JSON, for the side panels (the timeline folds long ones: jsonBlock). */
  V.json = (value) => JSON.stringify(value) ?? "";

  /* Data files are scripts that call viewerData(key, payload): fetch() of local files is
     blocked under file://, a <script> tag is not. Each file is loaded once. A page's payload
     comes gzip-compressed ({gzip_json: base64}, incognita.viewer.site) and is decompressed here,
     once, before anyone sees it. */
  const received = new Map();
  const pending = new Map();
  window.viewerData = function (key, payload) { received.set(key, payload); };

  V.load = function (key, src) {
    if (pending.has(key)) return pending.get(key);
    if (received.has(key)) return Promise.resolve(received.get(key));
    if (!pending.has(key)) {
      pending.set(key, new Promise((resolve, reject) => {
        const script = V.h("script", { src: src });
        script.onload = () => {
          if (!received.has(key)) { reject(new Error(src + " did not define " + key)); return; }
          const data = received.get(key);
          if (!data || typeof data.gzip_json !== "string") { resolve(data); return; }
          V.gunzipText(data.gzip_json).then((text) => {
            const value = JSON.parse(text);
            received.set(key, value);
            resolve(value);
          }, reject);
        };
        script.onerror = () => { pending.delete(key); reject(new Error("could not load " + src)); };
        document.head.append(script);
      }));
    }
    return pending.get(key);
  };

  V.index = () => received.get("index");

  /* The text of a data file's gzip bytes, shipped as base64 (no server, so no Content-Encoding). */
  V.gunzipText = async function (base64) {
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
  };

  /* The access family's names as the site data ships them (incognita.access.taxonomy): the arms
     in table order, native last, and the reader's failure types. */
  V.arms = () => V.index().taxonomy.arms;

  /* Routes: #<path>?<query>. The path is split at "/", each part URI-decoded. */
  V.route = function () {
    const raw = location.hash.replace(/^#/, "");
    const [path, query] = raw.split("?");
    return { parts: path ? path.split("/").map(decodeURIComponent) : [], query: new URLSearchParams(query || "") };
  };

  V.href = (parts, query) => "#" + parts.map(encodeURIComponent).join("/") +
    (query && String(query) ? "?" + String(query) : "");

  V.episodeHref = (arm, model, task, rep) => V.href([arm, model, task, rep]);

  /* A page key's route parts. A trial's key is arm/model/task/rep whose task is a qualified id
     (<domain>/<upstream id>): one part, which V.href encodes. CollabSim keys split at every "/". */
  V.keyParts = (key) => {
    const p = key.split("/");
    return p[0] === "collabsim" || p.length <= 4 ? p : [p[0], p[1], p.slice(2, -1).join("/"), p[p.length - 1]];
  };

  /* A trial's data file, as the site writes it: data/episodes/<arm>/<model>/<domain>/<id>/r<rep>.js. */
  V.episodeData = (arm, model, task, rep) => "data/episodes/" +
    [arm, model, ...String(task).split("/")].map(encodeURIComponent).join("/") + `/r${encodeURIComponent(rep)}.js`;

  V.badge = (text, kind, title) => V.h("span", { class: "badge " + (kind || ""), title: title }, text);

  /* Short names of the failure types, for chips and narrow cells: each word's initial
     (never_requested: NR). */
  V.failureShort = () => Object.fromEntries(V.index().taxonomy.failure_types.map(
    (t) => [t, t.split("_").map((w) => w[0].toUpperCase()).join("")]));

  V.outcomeBadge = function (outcome, failureType) {
    if (outcome === "success") return V.badge("success", "ok");
    if (outcome === "excluded") return V.badge("excluded", "muted");
    return V.badge(failureType ? failureType.replace(/_/g, " ") : "failed", "bad");
  };

  V.errorBox = (message) => V.h("div", { class: "error" }, message);

  /* An address that names nothing in this site: what was asked for, and where to go instead
     (never a data file's path: the reader typed or followed an address, not a path). */
  V.notFound = (message, links = []) => V.h("section", { class: "page", "data-testid": "not-found" },
    V.h("h1", {}, "Not in this site"), V.h("p", {}, message),
    V.h("p", {}, [...links, [V.href(["trials"]), "the trials index"], [V.href(["search"]), "search"]]
      .map(([href, label], i) => [i ? " · " : "", V.h("a", { href }, label)])));

  /* "1 turn", "2 turns": a count with its noun in the right number. */
  V.count = (n, one, many) => `${n} ${n === 1 ? one : many || one + "s"}`;

  /* Below this width the side panels of a page sit above its timeline (viewer.css, @media). */
  V.NARROW = "(max-width: 1100px)";

  /* A side panel: a fold with its title as the summary, open. `folds`: closed when the page is
     drawn narrow, where the panels sit above the timeline and only the first ones stay open, so
     the timeline starts within the first screen or two. */
  V.panel = function (attrs, title, ...children) {
    const { folds, ...rest } = attrs || {};
    const open = !(folds && window.matchMedia(V.NARROW).matches);
    return V.h("details", { ...rest, class: "panel" + (rest.class ? " " + rest.class : ""), open },
      V.h("summary", {}, V.h("h2", {}, title)), children);
  };

  /* An event's fields as a person reads them ("sender: agent · text: ..."), for search
     snippets: no JSON quoting or escapes; the kind, turn and ids are shown beside it already. */
  V.plainText = function plain(value, top = true) {
    if (V.isMissing(value)) return "";
    if (typeof value !== "object") return String(value);
    if (Array.isArray(value)) return value.map((v) => plain(v, false)).filter(Boolean).join(", ");
    return Object.entries(value).filter(([k]) => !(top && ["type", "kind", "turn", "harness_turn", "id", "call_id"].includes(k)))
      .map(([k, v]) => { const t = plain(v, false); return t === "" ? "" : `${k}: ${t}`; }).filter(Boolean).join(" · ");
  };

  /* A small definition list from [label, value] pairs; values may be nodes. */
  V.facts = (pairs) => V.h("dl", { class: "facts" },
    pairs.filter((p) => p).map(([k, v]) => [V.h("dt", {}, k), V.h("dd", {}, V.isMissing(v) ? "–" : v)]));
})();
