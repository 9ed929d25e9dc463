/* The trials index (#trials) and the matched per-task views (#tasks, #task/<id>). */
"use strict";
(function () {

  function trialPositions() {
    return Object.fromEntries(V.index().trials.columns.map((c, i) => [c.name, i]));
  }

  function trialHref(row, pos, list) {
    return V.href([row[pos.arm], row[pos.model], row[pos.task], row[pos.rep]], list);
  }

  /* The index's current filters and sort, for an episode opened from it (previous / next). */
  let listQuery = null;
  const fromList = () => listQuery ? new URLSearchParams([["in", "trials"], ...listQuery()]) : undefined;

  function trialCell(row, col, pos) {
    const v = row[pos[col.name]];
    if (col.name === "arm") return V.h("td", {}, V.h("a", { href: trialHref(row, pos, fromList()), title: "open the episode" }, v));
    if (col.name === "task") return V.h("td", {}, V.h("a", { href: V.href(["task", v]), title: "this task in every arm" }, v));
    if (col.name === "outcome") return V.h("td", {}, V.outcomeBadge(v));
    if (col.kind === "text") return V.h("td", {}, V.isMissing(v) ? "" : v);
    return V.h("td", { class: "num" }, V.fmt(v, col.kind));
  }

  /* Counts of the rows shown: the outcome mix, with the failure types. `q`: the search words
     the rows were narrowed to, if any (the index's whole count then follows). */
  function trialSummary(rows, total, pos, q) {
    const all = V.index().trials.rows.length;
    const shown = V.h("strong", { "data-testid": "shown" }, String(rows.length));
    if (q && !total) return V.h("span", {}, shown, ` trials: none of the ${all} has an event holding every word of “${q}”.`);
    const of = q ? ` of the ${V.count(total, "trial")} whose events hold “${q}” (${all} in all)` : ` of ${V.count(total, "trial")}`;
    if (!rows.length) return V.h("span", {}, shown, of + ".");
    const count = (test) => rows.filter(test).length;
    const types = {};
    for (const row of rows) {
      const t = row[pos.failure_type];
      if (t) types[t] = (types[t] || 0) + 1;
    }
    const failed = count((r) => r[pos.outcome] === "failed");
    return V.h("span", {}, shown, of + " · ",
      V.h("span", { class: "ok-text" }, `${count((r) => r[pos.outcome] === "success")} success`), " · ",
      V.h("span", { class: "bad-text" }, `${failed} failed`),
      Object.keys(types).length ? " (" + Object.entries(types).map(([t, n]) => `${t.replace(/_/g, " ")} ${n}`).join(", ") + ")" : "",
      ` · ${count((r) => r[pos.outcome] === "excluded")} excluded`);
  }

  /* The index's rows, narrowed to the trials whose events hold the words of q= when it is set. */
  V.trialRows = async function (query) {
    return (await searchedRows(query)).rows;
  };

  /* The rows, and what the search says of the words it left out (null without q=). A query
     with no word the search can use narrows nothing, and says so. */
  async function searchedRows(query) {
    const { rows } = V.index().trials;
    const q = (query.get("q") || "").trim();
    if (!q) return { rows, note: null, used: false };
    const pos = trialPositions();
    const { pages, note } = await V.searchPages(q);
    if (note && note.startsWith("Nothing")) return { rows, note: note + " Every trial is listed.", used: false };
    return { rows: rows.filter((r) => pages.has([r[pos.arm], r[pos.model], r[pos.task], r[pos.rep]].join("/"))), note, used: true };
  }

  V.trialsView = async function (query) {
    const { columns } = V.index().trials;
    const searched = await searchedRows(query);
    const rows = searched.rows;
    const q = (query.get("q") || "").trim();
    const withQ = (params) => { if (q) params.set("q", q); return params; };
    const pos = trialPositions();
    const table = new V.Table(columns, rows, {
      state: V.tableState(query, columns.map((c) => c.name)),
      visible: V.index().trials.shown,
      cell: (row, col) => trialCell(row, col, pos),
      onRow: (row) => { location.hash = trialHref(row, pos, fromList()); },
      summary: (shown, total) => trialSummary(shown, total, pos, searched.used ? q : ""),
      empty: () => searched.used && !rows.length ? `No trial has an event holding every word of “${q}”.` : null,
      onState: (state) => history.replaceState(null, "", V.href(["trials"], withQ(V.stateQuery(state)))),
    });
    listQuery = () => withQ(V.stateQuery(table.state));
    return V.h("section", { class: "page" },
      V.h("h1", {}, "Trials"),
      searched.note ? V.h("p", { class: "hint", "data-testid": "search-note" }, searched.note) : "",
      searched.used ? V.h("p", { "data-testid": "search-filter" }, `Only the trials whose events hold every word of “${q}” (`,
        V.h("a", { href: V.href(["search"], new URLSearchParams([["q", q]])) }, "the hits"), "; ",
        V.h("a", { href: V.href(["trials"], V.stateQuery(V.tableState(query, columns.map((c) => c.name)))) }, "all trials"), ").") : "",
      V.h("p", { class: "hint" }, "One row per trial. Choose values or type a number filter (>0.5, <=3, 2..5, none) ",
        "under a header; click a header to sort; click a row to read its episode. The address bar keeps the filters, ",
        "so a filtered view can be linked."),
      table.render());
  };

  /* ------------------------------------------------------------------ tasks */

  function trialsByTask() {
    const pos = trialPositions();
    const out = {};
    for (const row of V.index().trials.rows) (out[row[pos.task]] = out[row[pos.task]] || []).push(row);
    return [out, pos];
  }

  /* The tasks' domains (the part of a qualified id before "/"), each once, in the tasks' order. */
  const domainOf = (task) => task.split("/")[0];

  /* With several domains: links to the tasks of each (#tasks?domain=<name>), the current one bold. */
  function domainChoice(domains, current) {
    if (domains.length < 2) return "";
    const link = (name, label) => name === current ? V.h("strong", {}, label)
      : V.h("a", { href: V.href(["tasks"], name ? new URLSearchParams([["domain", name]]) : undefined) }, label);
    return V.h("p", { "data-testid": "domains" }, "Domain: ", link("", "every domain"),
      domains.flatMap((d) => [" · ", link(d, d)]));
  }

  V.tasksView = function (query) {
    const [byTask, pos] = trialsByTask();
    const every = V.index().tasks;
    const domains = [...new Set(Object.keys(every).map(domainOf))];
    const current = query ? query.get("domain") || "" : "";
    const tasks = Object.fromEntries(Object.entries(every).filter(([t]) => !current || domainOf(t) === current));
    const arms = V.arms();
    const head = V.h("tr", {}, V.h("th", {}, "task"), V.h("th", {}, "level"), V.h("th", {}, "desks engaged"),
      arms.map((a) => V.h("th", { class: "num" }, a)));
    const body = Object.keys(tasks).map((t) => {
      const rows = byTask[t] || [];
      const rate = (arm) => {
        const mine = rows.filter((r) => r[pos.arm] === arm);
        return mine.length ? `${mine.filter((r) => r[pos.outcome] === "success").length}/${mine.length}` : "–";
      };
      return V.h("tr", {}, V.h("td", {}, V.h("a", { href: V.href(["task", t]) }, t)), V.h("td", {}, tasks[t].level),
        V.h("td", {}, tasks[t].desks_engaged.join(", ")), arms.map((a) => V.h("td", { class: "num" }, rate(a))));
    });
    return V.h("section", { class: "page" }, V.h("h1", {}, "Tasks"),
      V.h("p", { class: "hint" }, "Successes per arm over every model and repetition. Open a task to see it across ",
        "arms and models side by side, as the matched design pairs them."),
      domainChoice(domains, current),
      V.h("table", { class: "grid" }, V.h("thead", {}, head), V.h("tbody", {}, body)));
  };

  function chip(row, pos) {
    const outcome = row[pos.outcome];
    const type = row[pos.failure_type];
    const label = outcome === "success" ? "✓" : outcome === "excluded" ? "excl" : (V.failureShort()[type] || "✗");
    const turns = row[pos.turns];
    const title = `r${row[pos.rep]}: ${outcome}${type ? " (" + type + ")" : ""}, ${V.isMissing(turns) ? "turns unknown" : V.count(turns, "turn")}`;
    return V.h("a", { class: "chip " + outcome, href: trialHref(row, pos), title: title }, `r${row[pos.rep]} ${label}`);
  }

  function armSummary(spec) {
    if (!spec) return "";
    const calls = spec.required_calls.length;
    const roles = V.isMissing(spec.role_assignments) ? "" : `, ${spec.role_assignments} role assignments`;
    return `${calls} required calls by ${spec.executors.join(", ") || "nobody"}${roles}`;
  }

  V.taskView = function (task) {
    const [byTask, pos] = trialsByTask();
    const info = V.index().tasks[task];
    const rows = byTask[task];
    if (!info || !rows) return V.notFound(`No task ${task} in this design.`, [[V.href(["tasks"]), "every task"]]);
    const arms = V.arms();
    const models = [...new Set(rows.map((r) => r[pos.model]))].sort();
    const cell = (model, arm) => V.h("td", { "data-arm": arm },
      rows.filter((r) => r[pos.model] === model && r[pos.arm] === arm).sort((a, b) => a[pos.rep] - b[pos.rep])
        .map((r) => chip(r, pos)));
    const head = V.h("tr", {}, V.h("th", {}, "model"),
      arms.map((a) => V.h("th", { title: armSummary(info.arms[a]) }, a)), V.h("th", {}, "side by side"));
    const reps = [...new Set(rows.map((r) => r[pos.rep]))].sort((a, b) => a - b);
    const compare = (m) => V.h("td", {}, reps.map((r) => V.h("a", { class: "chip", href: V.href(["compare", m, task, r]),
      title: `r${r} of ${m} in every arm, side by side` }, `r${r}`)));
    const body = models.map((m) => V.h("tr", {}, V.h("th", {}, m), arms.map((a) => cell(m, a)), compare(m)));
    const successes = (arm) => {
      const mine = rows.filter((r) => r[pos.arm] === arm);
      return V.h("td", {}, mine.length ? `${mine.filter((r) => r[pos.outcome] === "success").length} of ${mine.length} succeed` : "");
    };
    const foot = V.h("tr", {}, V.h("th", {}, "all"), arms.map(successes), V.h("td"));
    const armLines = arms.filter((a) => info.arms[a]).map((a) => V.h("li", {}, V.h("strong", {}, a + ": "),
      armSummary(info.arms[a]), " — ", info.arms[a].required_calls.join(", ")));
    return V.h("section", { class: "page" },
      V.h("h1", {}, `Task ${task}`),
      V.facts([["level", info.level], ["desks engaged", info.desks_engaged.join(", ") || "none"],
        ["writes", info.writes.join(", ") || "none"], ["counted calls", info.n_counted],
        ["information items", `${info.customer_facts} customer + ${info.service_facts} service`]]),
      V.h("ul", { class: "arms" }, armLines),
      V.h("p", { class: "hint" }, "Each chip is one repetition: ✓ success, or the failure type's initials (",
        Object.entries(V.failureShort()).map(([k, v]) => `${v} ${k.replace(/_/g, " ")}`).join(", "),
      "); ✗ a failure without a type (native runs have none)."),
      V.h("table", { class: "grid matrix" }, V.h("thead", {}, head), V.h("tbody", {}, body), V.h("tfoot", {}, foot)));
  };
})();
