/* A filterable, sortable table over rows stored as arrays (the index's compact layout).
   Text columns filter by a value list whose counts follow the other filters; number columns
   by an expression (">0.5", "<=3", "2..5", "=0", "none", "any"). The state (filters and
   sort) round-trips through the URL, so a filtered view is a link. */
"use strict";
(function () {

  V.numberTest = function (expr) {
    const text = expr.trim().toLowerCase();
    if (!text) return null;
    if (text === "none") return V.isMissing;
    if (text === "any") return (v) => !V.isMissing(v);
    const range = text.match(/^(-?[\d.]+)\s*\.\.\s*(-?[\d.]+)$/);
    if (range) return (v) => !V.isMissing(v) && v >= +range[1] && v <= +range[2];
    const cmp = text.match(/^(<=|>=|<|>|=|!=)?\s*(-?[\d.]+)$/);
    if (!cmp) return () => false;  // an expression it cannot read matches nothing, visibly
    const x = +cmp[2];
    const op = cmp[1] || "=";
    const tests = {
      "<": (v) => v < x, "<=": (v) => v <= x, ">": (v) => v > x, ">=": (v) => v >= x,
      "=": (v) => Math.abs(v - x) < 1e-9, "!=": (v) => Math.abs(v - x) >= 1e-9,
    };
    return (v) => !V.isMissing(v) && tests[op](v);
  };

  const NONE = "(none)";
  const ROW = 24;  // px per row: .windowed tbody tr in viewer.css
  const SPARE = 30;  // rows drawn above and below the visible part

  V.Table = class {
    /* columns: [{name, label, kind, title}]; kind "text" filters by value, anything else by
       number. options: {state: {filters, sort}, visible, cell(row, col, i), onRow(row),
       summary(rows) -> node, onState(state), empty() -> why no row is shown, or null}. */
    constructor(columns, rows, options) {
      this.columns = columns;
      this.rows = rows;
      this.opt = options;
      this.pos = Object.fromEntries(columns.map((c, i) => [c.name, i]));
      this.defaultVisible = (options.visible || columns.map((c) => c.name)).filter((n) => n in this.pos);
      this.state = { filters: { ...(options.state.filters || {}) }, sort: options.state.sort || "",
        cols: (options.state.cols || []).filter((n) => n in this.pos) };
      /* A column under a filter is shown even when the choice hides it (a link's filter on a
         column the default leaves out, say): a filter in force is never invisible. */
      const chosen = this.state.cols.length ? this.state.cols : this.defaultVisible;
      const filtered = Object.keys(this.state.filters).filter((n) => this.state.filters[n] !== "" && n in this.pos);
      this.visible = chosen.concat(columns.map((c) => c.name).filter((n) => filtered.includes(n) && !chosen.includes(n)));
      this.controls = {};
    }

    value(row, name) { return row[this.pos[name]]; }

    test(name) {
      const expr = this.state.filters[name];
      if (expr === undefined || expr === "") return null;
      const col = this.columns[this.pos[name]];
      if (col.kind !== "text") return V.numberTest(expr);
      return (v) => (V.isMissing(v) ? NONE : String(v)) === expr;
    }

    /* The rows passing every filter but `skip`'s: the value counts of `skip`'s list. */
    filtered(skip) {
      const tests = Object.keys(this.state.filters).filter((n) => n !== skip && n in this.pos)
        .map((n) => [this.pos[n], this.test(n)]).filter(([, t]) => t);
      return this.rows.filter((row) => tests.every(([i, t]) => t(row[i])));
    }

    sorted(rows) {
      const desc = this.state.sort.startsWith("-");
      const name = this.state.sort.replace(/^-/, "");
      if (!(name in this.pos)) return rows;
      const i = this.pos[name];
      const cmp = (a, b) => {
        const x = a[i], y = b[i];
        if (V.isMissing(x) || V.isMissing(y)) return V.isMissing(x) - V.isMissing(y);  // missing last
        const order = typeof x === "number" && typeof y === "number" ? x - y
          : String(x).localeCompare(String(y), undefined, { numeric: true });
        return desc ? -order : order;
      };
      return rows.slice().sort(cmp);  // stable: ties keep the index order
    }

    render() {
      this.body = V.h("tbody");
      this.count = V.h("div", { class: "summary", "data-testid": "summary" });
      const head = V.h("tr", {}, this.visible.map((n) => this.header(n)));
      const filters = V.h("tr", { class: "filters" }, this.visible.map((n) => V.h("th", {}, this.control(n))));
      const table = V.h("table", { class: "grid windowed" }, this.colgroup(), V.h("thead", {}, head, filters), this.body);
      table.style.width = this.width + "px";
      this.scroller = V.h("div", { class: "scroll", onscroll: () => this.schedule() }, table);
      this.el = V.h("div", { class: "table-wrap" }, V.h("div", { class: "table-tools" }, this.count, this.chooser()),
        this.scroller);
      this.update();
      return this.el;
    }

    /* A menu of every column, to show or hide it; the choice is in the address (cols=...). */
    chooser() {
      const shown = new Set(this.visible);
      const boxes = this.columns.map((col) => V.h("label", { title: col.title || col.label },
        V.h("input", { type: "checkbox", "data-col": col.name, checked: shown.has(col.name),
          onchange: (e) => {
            e.target.checked ? shown.add(col.name) : shown.delete(col.name);
            if (!shown.size) { shown.add(col.name); e.target.checked = true; return; }  // keep one column
            this.visible = this.columns.map((c) => c.name).filter((n) => shown.has(n));
            const same = this.visible.join() === this.defaultVisible.join();
            this.state.cols = same ? [] : this.visible;
            this.el.replaceWith(this.render());
            this.el.querySelector("details.columns").open = true;
            this.changed();
          } }), " ", col.label));
      return V.h("details", { class: "columns", "data-testid": "columns" },
        V.h("summary", {}, `columns (${this.visible.length} of ${this.columns.length})`), V.h("div", { class: "column-list" }, boxes));
    }

    /* Fixed column widths from the longest value of each column, so the rows drawn while
       scrolling never move the columns (the table is laid out as `table-layout: fixed`). */
    colgroup() {
      const widths = this.visible.map((n) => {
        const col = this.columns[this.pos[n]];
        let chars = col.label.length + 2;
        const extra = col.kind === "text" ? 6 : 0;
        for (const row of this.rows) chars = Math.max(chars, V.fmt(row[this.pos[n]], col.kind).length + extra);
        return Math.min(Math.max(chars * 7 + 16, 48), 240);
      });
      this.width = widths.reduce((a, b) => a + b, 0);
      return V.h("colgroup", {}, widths.map((w) => {
        const el = V.h("col");
        el.style.width = w + "px";
        return el;
      }));
    }

    header(name) {
      const col = this.columns[this.pos[name]];
      const mark = this.state.sort === name ? " ▲" : this.state.sort === "-" + name ? " ▼" : "";
      return V.h("th", { title: (col.title || col.label) + " (click to sort)", class: col.kind === "text" ? "" : "num" },
        V.h("button", { class: "sort", "data-col": name, onclick: () => this.toggleSort(name) }, col.label + mark));
    }

    toggleSort(name) {
      this.state.sort = this.state.sort === name ? "-" + name : this.state.sort === "-" + name ? "" : name;
      this.el.replaceWith(this.render());
      this.changed();
    }

    control(name) {
      const col = this.columns[this.pos[name]];
      const current = this.state.filters[name] || "";
      const set = (value) => { this.state.filters[name] = value; this.update(); this.changed(); };
      const el = col.kind === "text"
        ? V.h("select", { "data-filter": name, onchange: (e) => set(e.target.value) })
        : V.h("input", { "data-filter": name, value: current, placeholder: "filter", size: 4,
          title: "e.g. >0.5, <=3, 2..5, =0, none, any", oninput: (e) => set(e.target.value) });
      this.controls[name] = el;
      return el;
    }

    /* Value lists with counts under the other filters, keeping the current choice. */
    refreshLists() {
      for (const [name, el] of Object.entries(this.controls)) {
        if (el.tagName !== "SELECT") continue;
        const counts = new Map();
        const i = this.pos[name];
        for (const row of this.filtered(name)) {
          const v = V.isMissing(row[i]) ? NONE : String(row[i]);
          counts.set(v, (counts.get(v) || 0) + 1);
        }
        const chosen = this.state.filters[name] || "";
        if (chosen && !counts.has(chosen)) counts.set(chosen, 0);
        const values = [...counts.keys()].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
        el.replaceChildren(V.h("option", { value: "" }, "all"),
          ...values.map((v) => V.h("option", { value: v, selected: v === chosen }, `${v} (${counts.get(v)})`)));
        el.value = chosen;
      }
    }

    /* Filter and sort, then draw the rows in view. */
    update() {
      this.shown = this.sorted(this.filtered(null));
      this.refreshLists();
      this.count.replaceChildren(this.opt.summary(this.shown, this.rows.length));
      this.scroller.scrollTop = 0;
      this.window = null;
      this.paint();
    }

    schedule() {
      if (this.pending) return;
      this.pending = requestAnimationFrame(() => { this.pending = 0; this.paint(); });
    }

    /* Only the rows near the visible part of the box are in the page, between two spacers of
       the height of the rows left out: 864 rows (or 100,000) cost what 80 cost. Rows have one
       fixed height (ROW, set in viewer.css too). */
    paint() {
      const n = this.shown.length;
      const view = this.scroller.clientHeight || window.innerHeight;
      const first = Math.max(0, Math.floor(this.scroller.scrollTop / ROW) - SPARE);
      const last = Math.min(n, first + Math.ceil(view / ROW) + 2 * SPARE);
      if (this.window && this.window[0] === first && this.window[1] === last) return;
      this.window = [first, last];
      const spacer = (rows) => {
        const tr = V.h("tr", { class: "spacer" }, V.h("td", { colspan: this.visible.length }));
        tr.style.height = rows * ROW + "px";
        return tr;
      };
      const frag = document.createDocumentFragment();
      if (!n) {  /* say so, and which filter leaves nothing (an outcome no trial has, say) */
        const active = Object.entries(this.state.filters).filter(([, v]) => v !== "").map(([k, v]) => `${k} ${v}`);
        const said = this.opt.empty ? this.opt.empty() : null;  /* the view's own reason (a search that found nothing) */
        frag.append(V.h("tr", { class: "empty" }, V.h("td", { colspan: this.visible.length, "data-testid": "empty" },
          said || `No row of ${this.rows.length} matches ${active.length ? "these filters: " + active.join(", ") : "this view"}.`)));
      }
      if (first > 0) frag.append(spacer(first));
      for (const row of this.shown.slice(first, last)) frag.append(this.row(row));
      if (last < n) frag.append(spacer(n - last));
      this.body.replaceChildren(frag);
    }

    row(row) {
      const tr = V.h("tr", { class: "row" }, this.visible.map((n) => this.opt.cell(row, this.columns[this.pos[n]])));
      if (this.opt.onRow) tr.addEventListener("click", (e) => { if (!e.target.closest("a")) this.opt.onRow(row); });
      return tr;
    }

    changed() {
      if (this.opt.onState) this.opt.onState(this.state);
    }
  };

  /* Filters and sort from a URL query, and back. */
  V.tableState = function (query, names) {
    const filters = {};
    for (const [k, v] of query.entries()) if (names.includes(k)) filters[k] = v;
    const cols = (query.get("cols") || "").split(",").filter((n) => names.includes(n));
    return { filters, sort: query.get("sort") || "", cols };
  };

  V.stateQuery = function (state) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(state.filters)) if (v !== "") q.set(k, v);
    if (state.sort) q.set("sort", state.sort);
    if (state.cols && state.cols.length) q.set("cols", state.cols.join(","));
    return q;
  };
})();
