/* CollabSim: the runs index (#collabsim) and one page per run
   (#collabsim/<task>/<condition>/<model>/<design>/s<seed>), its events in lanes, each probe
   folded into the row of the action it follows. */
"use strict";
(function () {
  const KINDS = [["message", "messages", true], ["action", "actions", true], ["message_rejected", "rejected messages", true],
    ["invalid_action", "invalid actions", true], ["state", "state", true], ["phase", "phases", true],
    ["private", "private materials", true], ["run_start", "start", true], ["run_end", "end", true],
    ["probe", "unattached probes", true], ["probe_error", "unattached probe errors", true]];

  function visibleColumns(runs, task) {
    const common = runs.columns.map((c) => c.name).filter((n) => n !== "key" && !Object.values(runs.task_metrics).flat().includes(n));
    return [...common, ...(task ? runs.task_metrics[task] || [] : [])];
  }

  V.collabsimView = function (query) {
    const runs = V.index().runs;
    if (!runs) return V.h("section", { class: "page" }, V.h("h1", {}, "CollabSim runs"),
      V.h("p", {}, "This site was built without CollabSim runs."));
    const names = runs.columns.map((c) => c.name);
    const state = V.tableState(query, names);
    const pos = Object.fromEntries(names.map((n, i) => [n, i]));
    const table = new V.Table(runs.columns, runs.rows, {
      state, visible: visibleColumns(runs, state.filters.task),
      cell: (row, col) => {
        const v = row[pos[col.name]];
        if (col.name === "seed") return V.h("td", {}, V.h("a", { href: "#" + row[pos.key] }, "s" + v));
        return col.kind === "text" ? V.h("td", {}, V.isMissing(v) ? "" : v) : V.h("td", { class: "num" }, V.fmt(v, "num"));
      },
      onRow: (row) => { location.hash = "#" + row[pos.key]; },
      summary: (shown, total) => V.h("span", {}, V.h("strong", { "data-testid": "shown" }, String(shown.length)), ` of ${V.count(total, "run")}`),
      onState: (s) => {
        const before = table.visible.join();
        history.replaceState(null, "", V.href(["collabsim"], V.stateQuery(s)));
        if (visibleColumns(runs, s.filters.task).join() !== before) V.render();  // a task's own metrics
      },
    });
    return V.h("section", { class: "page" }, V.h("h1", {}, "CollabSim runs"),
      V.h("p", { class: "hint" }, "One row per run. Choose a task to see its own metrics as columns; click a row to read the run."),
      table.render());
  };

  /* ------------------------------------------------------------------ one run */

  const when = (e) => `s${e.step} · ${e.t}s`;
  const seenBy = (e) => V.h("span", { class: "seen", title: "who sees this event" },
    e.visibility === "all" ? "seen by all" : `seen by ${(e.visibility || []).join(", ") || "nobody"}`);

  function payloadRest(p, skip) {
    const rest = Object.fromEntries(Object.entries(p || {}).filter(([k]) => !skip.includes(k)));
    return Object.keys(rest).length ? V.jsonBlock(rest) : "";
  }

  function drawing(e) {
    const p = e.payload || {};
    switch (e.kind) {
      case "message":
        return [e.actor, p.to === "all" ? "*" : p.to, [V.h("div", { class: "who" }, `${e.actor} → ${p.to}`, ` (${p.words} words)`),
          V.textBlock(p.text || "")]];
      case "message_rejected":
        return [e.actor, null, [V.h("div", { class: "who" }, V.badge("message rejected", "bad"), ` ${e.actor}`),
          V.h("div", { class: "reason" }, "reason: ", p.reason || ""), payloadRest(p, ["reason"])]];
      case "action":
        return [e.actor, null, [V.h("div", { class: "who" }, `${e.actor}: `, V.h("code", {}, p.action)), payloadRest(p, ["action"])]];
      case "invalid_action":
        return [e.actor, null, [V.h("div", { class: "who" }, V.badge("invalid action", "bad"), ` ${e.actor}`),
          V.h("div", { class: "reason" }, "reason: ", p.reason || ""), payloadRest(p, ["reason"])]];
      default:
        return [e.actor === "system" ? "system" : e.actor, null,
          [V.h("div", { class: "who" }, V.h("code", {}, e.kind), p.event ? ` ${p.event}` : "", p.phase ? ` ${p.phase}` : ""),
            payloadRest(p, ["event", "phase"])]];
    }
  }

  /* A probe as a folded block; its answers are built when it is opened (runs hold thousands). */
  function probeBlock(e) {
    const p = e.payload || {};
    const label = e.kind === "probe_error" ? `probe ${p.probe} error: ${p.reason || p.error || ""}`
      : `probe ${p.probe} (${p.trigger}): confidence ${(p.answers || []).map((a) => a.confidence).join(" / ")}`;
    const details = V.h("details", { class: "probe", "data-probe": e.id }, V.h("summary", {}, label));
    details.addEventListener("toggle", () => {
      if (!details.open || details.dataset.built) return;
      details.dataset.built = "1";
      V.append(details, [(p.answers || []).map((a) => V.h("div", { class: "answer" }, V.h("strong", {}, a.id + ": "), a.answer,
        ` (confidence ${a.confidence}) `, Object.keys(a.fields || {}).length ? V.jsonBlock(a.fields) : "")),
      p.truth ? V.h("div", {}, "truth: ", V.jsonBlock(p.truth)) : "", e.kind === "probe_error" ? V.jsonBlock(p) : ""]);
    });
    return details;
  }

  function timeline(page) {
    const tl = new V.Timeline(page.lanes);
    const byId = {};
    const rows = [];
    let folded = 0;  /* probes drawn inside the row of the action they follow */
    for (const e of page.events) {
      const probe = e.kind === "probe" || e.kind === "probe_error";
      if (probe && byId[e.follows]) {
        byId[e.follows].querySelector(".content").append(probeBlock(e));
        folded += 1;
        continue;
      }
      const [from, to, content] = probe ? [e.actor, null, [probeBlock(e)]] : drawing(e);
      const row = tl.row({ id: "ev" + e.id, when: when(e), from, to, kind: e.kind, content: [content, seenBy(e)] });
      row.dataset.lanes = to === "*" ? page.lanes.join(" ") : [from, to].filter(Boolean).join(" ");
      byId[e.id] = row;
      rows.push(row);
    }
    const body = V.h("div", { class: "timeline", "data-testid": "timeline" }, tl.header("step · time"), rows);
    const counts = {};
    for (const row of rows) counts[row.dataset.kind] = (counts[row.dataset.kind] || 0) + 1;
    const filters = V.timelineFilters(KINDS.filter(([k]) => counts[k]), page.lanes, body, counts,
      folded ? `, ${V.count(folded, "probe")} inside them` : "");
    const probes = V.h("label", {}, V.h("input", { type: "checkbox", checked: true, "data-kind": "probes",
      onchange: (ev) => body.classList.toggle("hide-probes", !ev.target.checked) }), `probes (${folded})`);
    filters.el.prepend(probes);
    filters.apply();
    return V.h("div", { class: "tl-wrap" }, filters.el, body);
  }

  /* What each agent was shown at each turn: its own data file, gzip-compressed (uncompressed it
     outweighs the events), loaded and decompressed when asked for; one fold per observation,
     its JSON built when opened. */
  async function readObservations(data) {
    const text = await V.gunzipText(data.gzip_base64);
    return text.split("\n").filter((line) => line.trim()).map((line) => JSON.parse(line));
  }

  function observationsPanel(page, src) {
    const list = V.h("div", { class: "observations", "data-testid": "observations" });
    const agent = V.h("select", { "aria-label": "agent" }, V.h("option", { value: "" }, "every agent"),
      page.lanes.filter((l) => l !== "system").map((a) => V.h("option", { value: a }, a)));
    const show = (rows) => {
      list.replaceChildren(...rows.filter((o) => !agent.value || o.agent === agent.value).map((o) => {
        const jump = V.h("a", { href: "#ev" + o.before_event, onclick: (ev) => {
          ev.preventDefault();
          const row = document.getElementById("ev" + o.before_event);
          if (row) row.scrollIntoView({ block: "center" });
        } }, `before event ${o.before_event}`);
        const fold = V.h("details", { class: "observation", "data-agent": o.agent },
          V.h("summary", {}, `${o.agent}, step ${o.step} `, jump));
        fold.addEventListener("toggle", () => {
          if (fold.open && !fold.dataset.built) { fold.dataset.built = "1"; fold.append(V.jsonBlock(o.shown)); }
        });
        return fold;
      }));
    };
    const button = V.h("button", { type: "button", "data-testid": "load-observations", onclick: async () => {
      button.disabled = true;
      const rows = await readObservations(await V.load(page.key + "/observations", src));
      agent.onchange = () => show(rows);
      button.replaceWith(agent);
      show(rows);
    } }, `show ${page.observations} observations`);
    return V.panel({ folds: true }, "What each agent saw",
      V.h("p", { class: "hint" }, "The observation each agent was given at each of its turns, as the model read it."),
      button, list);
  }

  function side(page, observationsSrc) {
    const m = page.manifest;
    const metrics = Object.entries(page.metrics).map(([k, v]) => [k.replace(/_/g, " "), V.fmt(v, "num")]);
    const agents = (page.config && page.config.agents) || [];
    return [V.panel({ "data-testid": "outcome" }, "Metrics", V.facts(metrics)),
      V.panel({ folds: true }, "Run",
        V.facts([["task", m.task], ["condition", `${m.condition} (${m.variable})`], ["design", m.design], ["model", m.model],
          ["seed", m.seed], ["steps", m.steps], ["events", m.events], ["state hash", V.h("code", {}, m.state_hash)],
          ["agents", Object.entries(m.roles || {}).map(([id, role]) => `${id}: ${role} (${(m.models || {})[id] || ""}` +
            `${m.personas && m.personas[id] ? ", persona " + m.personas[id] : ""})`).join("; ")],
          ["experiment", m.experiment_file], ["versions", `incognita ${m.incognita_version}, generator ${m.generator_version}`]]),
        agents.length ? V.jsonBlock(page.config, "resolved config") : "",
        V.jsonBlock({ usage: m.usage, probe_usage: m.probe_usage }, "usage")),
      page.observations ? observationsPanel(page, observationsSrc) : ""];
  }

  V.runView = async function (parts) {
    const key = parts.join("/");
    const runs = V.index().runs;
    const at = runs ? runs.columns.findIndex((c) => c.name === "key") : -1;
    if (!runs || !runs.rows.some((r) => r[at] === key)) {
      return V.notFound(`No CollabSim run ${parts.slice(1).join(" · ")} in this site.`, [[V.href(["collabsim"]), "the CollabSim runs"]]);
    }
    const base = `data/runs/${parts.slice(1).map(encodeURIComponent).join("/")}`;
    const page = await V.load(key, `${base}.js`);
    return V.h("section", { class: "page episode", "data-key": key },
      V.h("h1", {}, `CollabSim · ${parts.slice(1).join(" · ")}`),
      V.h("nav", { class: "same-cell" }, V.h("a", { href: V.href(["collabsim"], new URLSearchParams({ task: parts[1], condition: parts[2] })) },
        "every run of this task and condition")),
      V.h("div", { class: "split" }, timeline(page), V.h("aside", {}, side(page, `${base}.observations.js`))));
  };
})();
