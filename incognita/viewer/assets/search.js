/* Full-text search (#search?q=...): every word of the query, in any order, over every event of
   every episode, native run and CollabSim run. The index (data/search.js, incognita.viewer.
   search_index) loads on the first search; a hit's text loads with its page's own data. */
"use strict";
(function () {
  const SHOWN_PAGES = 50;  // pages listed with their hits; the count covers all
  const SNIPPETS = 20;     // pages whose events' text is loaded to show the hits

  const tokens = (text) => [...new Set(text.toLowerCase().match(/[a-z0-9]+/g) || [])];
  const words = (text) => tokens(text).filter((w) => w.length > 1);  /* the index holds words of two characters or more */

  function postings(encoded) {
    let doc = 0;
    return encoded.split(".").map((d) => (doc += parseInt(d, 36)));
  }

  /* The documents holding every indexed word of `q`, and the words left out as too common or unknown. */
  V.searchHits = async function (q) {
    const index = await V.load("search", "data/search.js");
    const asked = words(q);
    const short = tokens(q).filter((w) => w.length < 2);
    const common = asked.filter((w) => index.common.includes(w));
    const used = asked.filter((w) => !common.includes(w));
    if (!used.length) return { index, docs: [], common, asked, short, used };
    let docs = null;
    for (const w of used) {
      const mine = index.words[w] ? postings(index.words[w]) : [];
      const have = new Set(mine);
      docs = docs === null ? mine : docs.filter((d) => have.has(d));
      if (!docs.length) break;
    }
    return { index, docs: docs || [], common, asked, short, used };
  };

  /* What the search left out of a query, said so: one-character words (not indexed) and words
     too common to index; null when it used every word. */
  V.searchNote = function (hits) {
    const quoted = (ws) => ws.map((w) => `“${w}”`).join(", ");
    if (!hits.asked.length && !hits.short.length) return "Nothing to search for: the query has no word of letters or digits.";
    const parts = [];
    if (hits.short.length) parts.push(`${quoted(hits.short)} (the search indexes words of two characters or more)`);
    if (hits.common.length) parts.push(`${quoted(hits.common)} (in more than half of all events, so not indexed)`);
    if (!parts.length) return null;
    return (hits.used.length ? "Ignored " : "Nothing to search for: ignored ") + parts.join(" and ") + ".";
  };

  /* The page keys of the hits (for the trials index's q= filter). */
  V.searchPages = async function (q) {
    const hits = await V.searchHits(q);
    return { pages: new Set(hits.docs.map((d) => hits.index.pages[hits.index.doc_page[d]][0])), note: V.searchNote(hits) };
  };

  function eventText(page, link) {
    const ev = link.startsWith("ev") ? (page.events || []).find((e) => "ev" + e.id === link) : page.events[Number(link.slice(1))];
    return ev ? V.plainText(ev) : "";
  }

  function snippet(text, asked) {
    const lower = text.toLowerCase();
    const at = asked.map((w) => lower.indexOf(w)).filter((i) => i >= 0);
    const start = Math.max(0, (at.length ? Math.min(...at) : 0) - 60);
    const part = text.slice(start, start + 220);
    const nodes = [];
    let rest = part;
    const re = new RegExp("(" + asked.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|") + ")", "i");
    while (rest) {
      const m = asked.length ? rest.match(re) : null;
      if (!m) { nodes.push(rest); break; }
      nodes.push(rest.slice(0, m.index), V.h("mark", {}, m[0]));
      rest = rest.slice(m.index + m[0].length);
    }
    return V.h("span", { class: "snippet" }, start ? "…" : "", nodes, start + 220 < text.length ? "…" : "");
  }

  V.searchView = async function (query) {
    const q = query.get("q") || "";
    const form = V.searchForm(q);
    const head = [V.h("h1", {}, "Search"), form];
    if (!q.trim()) return V.h("section", { class: "page" }, head, V.h("p", { class: "hint" }, "Type words to find, in any order."));
    const hits = await V.searchHits(q);
    const { index, docs } = hits;
    const byPage = new Map();
    for (const d of docs) {
      const p = index.doc_page[d];
      if (!byPage.has(p)) byPage.set(p, []);
      byPage.get(p).push(index.doc_event[d]);
    }
    const pages = [...byPage.entries()].slice(0, SHOWN_PAGES);
    const loaded = await Promise.all(pages.map(([p], i) => i < SNIPPETS
      ? V.load(index.pages[p][0], index.pages[p][1]).catch(() => null) : null));
    const used = hits.used;
    const items = pages.map(([p, links], i) => {
      const key = index.pages[p][0];
      const eventLinks = [...new Set(links)].slice(0, 8).map((link) => V.h("li", {},
        V.h("a", { href: V.href([...V.keyParts(key), link]) }, link), " ", loaded[i] ? snippet(eventText(loaded[i], link), used) : ""));
      return V.h("li", { class: "hit", "data-hit": key }, V.h("a", { href: V.href(V.keyParts(key)) }, key),
        ` · ${V.count(links.length, "event")}`, V.h("ul", {}, eventLinks));
    });
    const trialsLink = V.h("a", { href: V.href(["trials"], new URLSearchParams([["q", q]])) }, "these trials in the index");
    const note = V.searchNote(hits);
    const count = docs.length ? [`${V.count(docs.length, "event")} in ${V.count(byPage.size, "page")}`, " · ", trialsLink]
      : hits.used.length ? `No event holds every word of “${hits.used.join(" ")}”.` : "";
    return V.h("section", { class: "page" }, head,
      note ? V.h("p", { class: "hint", "data-testid": "search-note" }, note) : "",
      V.h("p", { "data-testid": "search-count" }, count),
      byPage.size > SHOWN_PAGES ? V.h("p", { class: "hint" }, `The first ${SHOWN_PAGES} pages are listed.`) : "",
      V.h("ol", { class: "hits" }, items));
  };

  V.searchForm = function (q) {
    const input = V.h("input", { type: "search", name: "q", value: q || "", placeholder: "search every event", size: 28,
      "data-testid": "search-input" });
    return V.h("form", { class: "search", onsubmit: (e) => {
      e.preventDefault();
      location.hash = V.href(["search"], new URLSearchParams([["q", input.value]]));
    } }, input, V.h("button", { type: "submit" }, "search"));
  };
})();
