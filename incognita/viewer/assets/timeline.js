/* A timeline with one lane per participant, drawn like a sequence diagram: each row has its
   time on the left, a dot in the actor's lane with an arrow to the lane it addresses, and
   its content on the right. Episodes, native runs and CollabSim runs all draw with it. */
"use strict";
(function () {
  const LANE = 44;  // px per lane; the content column takes the rest

  V.Timeline = class {
    constructor(lanes, laneWidth = LANE) {
      this.lanes = lanes;
      this.laneWidth = laneWidth;
      this.at = Object.fromEntries(lanes.map((l, i) => [l, i]));
    }

    laneArea(children) {
      const el = V.h("div", { class: "lanes" }, children);
      el.style.setProperty("--n", this.lanes.length);
      el.style.setProperty("--w", this.laneWidth + "px");
      return el;
    }

    header(leftLabel) {
      const names = this.lanes.map((l, i) => {
        const el = V.h("span", { class: "lane-name", title: l }, l);  /* whole, turned upright in the CSS */
        el.style.setProperty("--i", i);
        return el;
      });
      return V.h("div", { class: "tl-row tl-head" }, V.h("div", { class: "when" }, leftLabel),
        this.laneArea(names), V.h("div", { class: "content" }, ""));
    }

    /* from, to: lane names; to "*" is everyone but the actor and the system lanes. */
    marks(from, to, kind) {
      const out = [];
      const a = this.at[from];
      if (a === undefined) return out;
      const dot = V.h("span", { class: "dot " + kind });
      dot.style.setProperty("--i", a);
      out.push(dot);
      const b = to === "*" ? null : this.at[to];
      if (to === "*") {
        const arrow = V.h("span", { class: "span-all " + kind });
        arrow.style.setProperty("--a", 0);
        arrow.style.setProperty("--b", this.lanes.length - 2);
        out.push(arrow);
      } else if (b !== undefined && b !== a) {
        const arrow = V.h("span", { class: "arrow " + kind + (b < a ? " left" : "") });
        arrow.style.setProperty("--a", Math.min(a, b));
        arrow.style.setProperty("--b", Math.max(a, b));
        out.push(arrow);
      }
      return out;
    }

    /* One row. spec: {id, when, from, to, kind, content (nodes), cls}. */
    row(spec) {
      return V.h("div", { class: "tl-row " + (spec.cls || ""), id: spec.id, "data-kind": spec.kind },
        V.h("div", { class: "when" }, spec.when),
        this.laneArea(this.marks(spec.from, spec.to, spec.kind)),
        V.h("div", { class: "content" }, spec.content));
    }
  };

  /* A value shown as JSON; long ones fold into <details> with a one-line preview. */
  V.jsonBlock = function (value, label) {
    const flat = JSON.stringify(value) ?? "";
    if (flat.length <= 200) return V.h("code", { class: "json" }, flat);
    return V.h("details", { class: "json" }, V.h("summary", {}, (label ? label + ": " : ""), flat.slice(0, 80) + "…"),
      V.h("pre", {}, JSON.stringify(value, null, 1)));
  };

  /* Long text folds after a few lines, with the whole of it one click away. */
  V.textBlock = function (text) {
    const el = V.h("div", { class: "text" }, text);
    if (text.length > 600 || text.split("\n").length > 10) {
      el.classList.add("folded");
      const more = V.h("button", { class: "more", onclick: () => { el.classList.toggle("folded"); } }, "more / less");
      return V.h("div", {}, el, more);
    }
    return el;
  };

  /* The event-kind switches and the lane focus above a timeline; `apply` re-filters the rows. */
  V.timelineFilters = function (kinds, lanes, container, counts, aside = "", initial = {}) {
    /* initial: {hidden: [kinds], lane, onChange(state)}: the state read from and kept in the address. */
    const state = { hidden: new Set(initial.hidden || []), lane: lanes.includes(initial.lane) ? initial.lane : "" };
    const changed = () => { if (initial.onChange) initial.onChange(state); };
    const apply = () => {
      let shown = 0;
      for (const row of container.querySelectorAll(".tl-row[data-kind]")) {
        const lanesOf = (row.dataset.lanes || "").split(" ");
        const visible = !state.hidden.has(row.dataset.kind) && (!state.lane || lanesOf.includes(state.lane));
        row.hidden = !visible;
        shown += visible;
      }
      counter.textContent = `${shown} of ${V.count(container.querySelectorAll(".tl-row[data-kind]").length, "event")} shown${aside}`;
    };
    const counter = V.h("span", { class: "counter", "data-testid": "event-count" });
    const boxes = kinds.map(([kind, label, on]) => {
      if (!on && !initial.hidden) state.hidden.add(kind);
      const box = V.h("input", { type: "checkbox", checked: !state.hidden.has(kind), "data-kind": kind,
        onchange: (e) => { e.target.checked ? state.hidden.delete(kind) : state.hidden.add(kind); apply(); changed(); } });
      return V.h("label", { class: "kind " + kind }, box, `${label} (${counts[kind] || 0})`);
    });
    const select = V.h("select", { "data-filter": "lane", onchange: (e) => { state.lane = e.target.value; apply(); changed(); } },
      V.h("option", { value: "" }, "every lane"), lanes.map((l) => V.h("option", { value: l, selected: l === state.lane }, l)));
    return { el: V.h("div", { class: "tl-filters" }, boxes, V.h("label", {}, "only ", select), counter), apply };
  };
})();
