/* Episode pages (#arm/model/task/rep, optionally /e<event> to point at one event): the
   timeline beside the outcome, the reader's label and rule, and the coordination reference
   ticked off at the turn each item was satisfied. Native runs share the layout. */
"use strict";
(function () {
  const EPISODE_KINDS = [["message", "messages", true], ["tool_proposal", "tool proposals", true],
    ["gateway_decision", "gateway decisions", true], ["disclosure", "disclosures", true],
    ["protocol_error", "protocol errors", true], ["referral", "referrals", true], ["truncation", "truncation", true]];
  const NATIVE_KINDS = [["message", "messages", true], ["tool_proposal", "tool calls", true],
    ["tool_result", "tool results", true], ["note", "system", true]];
  const STATUS = { accepted: "ok", not_owner: "bad", inadmissible: "bad", error: "bad", ok: "ok",
    released: "ok", already_released: "muted", unknown: "bad", refused: "bad" };
  const ENV = "ENVIRONMENT";

  const status = (s) => V.badge(String(s).replace(/_/g, " "), STATUS[s] || "");

  /* What one event draws: [from, to, content]. */
  function drawing(e) {
    switch (e.type) {
      case "message":
        return [e.sender, e.recipient, [V.h("div", { class: "who" }, `${e.sender} → ${e.recipient}`,
          e.message_type !== "MESSAGE" ? V.badge(e.message_type, "final") : ""), V.textBlock(e.text || "")]];
      case "tool_proposal":
        return [e.proposer, ENV, [V.h("div", { class: "who" }, `${e.proposer} proposes `, V.h("code", {}, e.tool)),
          V.jsonBlock(e.arguments, "arguments")]];
      case "gateway_decision":
        return [ENV, e.proposer, [V.h("div", { class: "who" }, "gateway: ", status(e.status), " ",
          V.h("code", {}, e.tool), ` for ${e.proposer}`, e.write ? V.badge("write", "write") : ""),
        V.jsonBlock(e.arguments, "arguments"),
        e.reason ? V.h("div", { class: "reason" }, "reason: ", e.reason) : "",
        e.result !== null && e.result !== undefined ? V.h("div", { class: "result" }, "result: ", V.jsonBlock(e.result, "result")) : ""]];
      case "tool_result":
        return [ENV, e.proposer, [V.h("div", { class: "who" }, "environment: ", status(e.status), " ", V.h("code", {}, e.tool)),
          V.jsonBlock(e.result, "result")]];
      case "disclosure":
        return ["USER", null, [V.h("div", { class: "who" }, "disclosure gate: ", V.h("code", { class: "token" }, e.token), " ",
          status(e.status)), e.value !== null && e.value !== undefined ? V.h("div", {}, "value: ", V.h("code", {}, e.value)) : "",
        e.reason ? V.h("div", { class: "reason" }, "reason: ", e.reason) : ""]];
      case "protocol_error":
        return [e.actor, null, [V.h("div", { class: "who" }, V.badge("protocol error", "bad"), ` by ${e.actor}`),
          V.h("div", { class: "reason" }, "reason: ", e.reason), V.h("details", {}, V.h("summary", {}, "raw output"),
            V.h("pre", {}, e.raw || ""))]];
      case "referral":  /* an arm whose holders refer: the reply just before named one other holder */
        return [e.referrer, e.holder, [V.h("div", { class: "who" }, V.badge("referral", ""), ` ${e.referrer} sends the agent to ${e.holder}`)]];
      case "truncation":
        return [ENV, null, [V.h("div", { class: "who" }, V.badge("truncated", "bad"), ` the turn budget (${e.budget}) ran out`)]];
      default:
        return [null, null, [V.h("div", { class: "who" }, e.type), V.textBlock(e.text || "")]];
    }
  }

  /* The episode's filters in the address (hide=<kinds>&lane=<lane>), beside the list it was opened from. */
  function addressFilters(page, query) {
    const hide = query.get("hide");
    return {
      hidden: hide === null ? undefined : hide.split(",").filter(Boolean),
      lane: query.get("lane") || "",
      onChange: (state) => {
        const q = new URLSearchParams(query);
        if (state.hidden.size) q.set("hide", [...state.hidden].join(",")); else q.delete("hide");
        if (state.lane) q.set("lane", state.lane); else q.delete("lane");
        history.replaceState(null, "", V.href(V.keyParts(page.key), q));
      },
    };
  }

  /* Previous and next through the trials list the page was opened from (in=trials and that
     list's filters and sort in the address), recomputed from the index. */
  async function listNav(page, query) {
    if (query.get("in") !== "trials") return "";
    const { columns } = V.index().trials;
    const rows = await V.trialRows(query);
    const table = new V.Table(columns, rows, { state: V.tableState(query, columns.map((c) => c.name)) });
    const pos = table.pos;
    const keys = table.sorted(table.filtered(null)).map((r) => [r[pos.arm], r[pos.model], r[pos.task], r[pos.rep]].join("/"));
    const at = keys.indexOf(page.key);
    const list = new URLSearchParams([...query].filter(([k]) => k !== "hide" && k !== "lane"));
    const back = new URLSearchParams([...list].filter(([k]) => k !== "in"));
    const go = (i, label) => i >= 0 && i < keys.length
      ? V.h("a", { href: V.href(V.keyParts(keys[i]), list), "data-testid": label }, label === "previous" ? "← previous" : "next →")
      : V.h("span", { class: "muted" }, label === "previous" ? "← previous" : "next →");
    return V.h("nav", { class: "list-nav", "data-testid": "list-nav" }, go(at - 1, "previous"), " · ",
      at >= 0 ? `${at + 1} of ${keys.length} in ` : `not in the ${keys.length} trials of `,
      V.h("a", { href: V.href(["trials"], back) }, "the list"), " · ", go(at + 1, "next"));
  }

  function timeline(page, kinds, query) {
    const tl = new V.Timeline(page.lanes);
    const attempts = attemptBadges(page);
    const rows = page.events.map((e, i) => {
      const [from, to, content] = drawing(e);
      const row = tl.row({ id: "e" + i, when: `${V.isMissing(e.turn) ? "" : e.turn}`, from, to, kind: e.type, content });
      row.dataset.lanes = [from, to].filter(Boolean).join(" ");
      row.querySelector(".when").append(V.h("a", { class: "permalink", href: V.href([...V.keyParts(page.key), "e" + i]),
        title: "link to this event" }, "#"));
      for (const f of (page.findings || []).filter((x) => x.event === i)) {
        row.querySelector(".content").append(V.badge("audit: " + f.kind.replace(/_/g, " "), "bad", f.detail));
      }
      for (const badge of attempts[i] || []) row.querySelector(".content").append(badge);
      return row;
    });
    const body = V.h("div", { class: "timeline", "data-testid": "timeline" }, tl.header("turn"), rows);
    const counts = {};
    for (const e of page.events) counts[e.type] = (counts[e.type] || 0) + 1;
    const filters = V.timelineFilters(kinds, page.lanes, body, counts, "", addressFilters(page, query));
    filters.apply();
    return V.h("div", { class: "tl-wrap" }, filters.el, body);
  }

  /* A link to the event where a reference item was satisfied, or why it was not. */
  function at(page, where, open) {
    if (!where) return V.h("span", { class: "no", title: open || "" }, "✗ " + (open || "never"));
    return V.h("a", { class: "yes", href: V.href([...V.keyParts(page.key), "e" + where.event]) }, `✓ turn ${where.turn}`);
  }

  /* One way an attempt differs from its required call, as a person reads it. */
  function difference(d) {
    if (d.what === "status") return [`the gateway answered ${String(d.got).replace(/_/g, " ")}`, d.reason ? `: ${d.reason}` : ""];
    if (d.what === "executor") return [`proposed by ${d.got}, not ${d.want}`];
    const got = V.isMissing(d.got) ? "left out" : V.json(d.got);
    return [V.h("code", {}, d.what), ` ${got}`, V.isMissing(d.want) ? " (not in the reference)" : ` where the reference has ${V.json(d.want)}`];
  }

  /* The attempt nearest a required call no decision matched (checklist.py, closest_attempt):
     a link to it and how it differs from the reference. */
  function closest(page, c) {
    return V.h("div", { class: "closest", "data-testid": "closest-attempt" }, "closest attempt: ",
      V.h("a", { href: V.href([...V.keyParts(page.key), "e" + c.event]) }, `turn ${c.turn}`), ` by ${c.proposer}; `,
      V.h("ul", { class: "differences" }, c.differences.map((d) => V.h("li", {}, difference(d)))));
  }

  /* A decision that is the closest attempt at a required call, marked on its timeline row. */
  function attemptBadges(page) {
    const out = {};
    for (const c of (page.reference ? page.reference.calls : [])) {
      if (!c.closest) continue;
      const why = c.closest.differences.map((d) => d.what === "status" ? `${d.got}${d.reason ? ": " + d.reason : ""}`
        : `${d.what}: ${V.json(d.got)} (reference ${V.json(d.want)})`).join("; ");
      (out[c.closest.event] = out[c.closest.event] || []).push(V.badge(`≠ reference ${c.tool}`, "bad", why));
    }
    return out;
  }

  function checklist(page) {
    const r = page.reference;
    const li = (label, mark, extra) => V.h("li", {}, mark, " ", label, extra ? V.h("span", { class: "extra" }, " ", extra) : "");
    const items = r.items.map((it) => li(it.kind === "customer" ? ["customer ", V.h("code", { class: "token" }, it.token)]
      : ["service ", V.h("code", {}, it.tool), ` at ${it.holder} `, V.jsonBlock(it.arguments)],
    at(page, it.at, it.obtained ? "" : (it.approached ? "not obtained; source approached" : "not obtained; source never approached"))));
    const calls = r.calls.map((c) => li([V.h("code", {}, c.tool), ` by ${c.executor} `, V.jsonBlock(c.arguments)],
      at(page, c.at, c.closest === null ? "never proposed" : "not executed as the reference"),
      [c.tool_type === "write" ? V.badge("write", "write") : "", c.closest ? closest(page, c.closest) : ""]));
    const holders = r.holders.map((h) => li(h.holder, h.holder === "agent" ? V.h("span", { class: "muted" }, "(the agent)") :
      at(page, h.contacted, "never contacted"), ["acted: ", at(page, h.acted, "no accepted call")]));
    const roles = r.role_assignments ? r.role_assignments.map((a) => li([V.h("code", {}, a.tool), ` at ${a.desk}`],
      at(page, a.executed, "never executed there"), ["contacted: ", at(page, a.contacted, "never")])) : null;
    return V.panel({ "data-testid": "reference", folds: true }, `Coordination reference: task ${r.task}, ${page.cell.arm}`,
      V.facts([["level", r.level], ["desks engaged", r.desks_engaged.join(", ")]]),
      V.h("h3", {}, "Required holders"), V.h("ul", { class: "check" }, holders),
      roles ? [V.h("h3", {}, "Role assignments"), V.h("ul", { class: "check" }, roles)] : "",
      V.h("h3", {}, "Information items"), V.h("ul", { class: "check" }, items),
      V.h("h3", {}, "Required calls"), V.h("ul", { class: "check" }, calls));
  }

  const flag = (v) => V.isMissing(v) ? "not operative" : v ? "✓ pass" : "✗ fail";

  function outcome(page) {
    const o = page.outcome;
    return V.panel({ "data-testid": "outcome" }, "Outcome",
      V.facts([["outcome", V.outcomeBadge(page.trial.outcome, page.trial.failure_type)],
        ["termination", `${o.termination} after ${V.count(o.turns, "turn")}`],
        ["DB channel", flag(o.channels.db)], ["communicate channel", flag(o.channels.communicate)],
        ["NL channel", flag(o.channels.nl)], ["database-only success", flag(o.database_only_success)],
        ["final database", o.final_db_hash === o.gold_hash ? "matches the gold state" : "differs from the gold state"],
        ["information channel", o.information_channel], o.error ? ["error", o.error] : null]),
      o.judgements.length ? V.jsonBlock(o.judgements, "judge verdicts") : "");
  }

  function reading(page) {
    const f = page.failure;
    const t = page.trial;
    const measures = ["role_identification", "holder_contacted", "information_acquisition", "customer_information",
      "service_information", "execution"].map((k) => [k.replace(/_/g, " "), V.fmt(t[k], "frac")]);
    const rule = f ? [V.h("p", { "data-testid": "failure-rule" }, V.badge(f.label.replace(/_/g, " "), "bad"),
      ` rule ${f.rule} of the reader's table: ${f.question}.`),
    f.recomputed !== f.label ? V.errorBox(`This code reads the episode as ${f.recomputed}: the table was built by another reader version.`) : "",
    V.h("ul", { class: "evidence" }, f.evidence.map((x) => V.h("li", {}, x)),
      /* where a required call went wrong: its closest attempt (the reference panel has the differences) */
      (page.reference ? page.reference.calls : []).filter((c) => c.closest).map((c) => V.h("li", {}, `closest attempt at `,
        V.h("code", {}, c.tool), ": ", V.h("a", { href: V.href([...V.keyParts(page.key), "e" + c.closest.event]) },
          `turn ${c.closest.turn}`), ` by ${c.closest.proposer}`))),
    V.facts([["reads credited (B.2)", f.audits.reads_credited], ["exact credited", f.audits.exact_credited],
      ["request based", f.audits.request_based]])]
      : V.h("p", { "data-testid": "failure-rule" }, t.outcome === "failed" ? "No label." : `No failure type: ${t.outcome}.`);
    return V.panel({ "data-testid": "reader" }, "Reader", rule,
      V.h("h3", {}, "Process measures"), V.facts(measures),
      V.facts([["agent actions", t.agent_actions], ["unanswerable questions", t.unanswerable_questions],
        ["extra reads", t.non_reference_reads], ["extra actions", t.non_reference_actions],
        ["injected (ground truth)", t.injected_failure || "none"]]));
  }

  /* The participant audit (docs/fidelity.md): each finding with a link to the reply it marks. */
  function audit(page) {
    const t = page.trial;
    const head = "Participant audit";
    if (!page.findings) {
      return V.panel({ "data-testid": "audit", folds: true }, head,
        V.h("p", { class: "hint" }, "The trials table has no audit for this trial (read with --no-audit, or by an older reader)."));
    }
    const items = page.findings.map((f) => V.h("li", {}, V.badge(f.kind.replace(/_/g, " "), "bad"), ` ${f.participant}, `,
      V.h("a", { href: V.href([...V.keyParts(page.key), "e" + f.event]) }, `turn ${f.turn}`), ": ", V.h("code", {}, f.detail)));
    return V.panel({ "data-testid": "audit", folds: true }, head,
      V.facts([["replies audited", t.participant_messages],
        ["attribution", t.failure_attribution ? t.failure_attribution.replace(/_/g, " ") : "none (not an acquisition failure)"]]),
      items.length ? V.h("ul", { class: "check" }, items) : V.h("p", {}, "No finding."));
  }

  function usage(page) {
    const rows = Object.entries(page.usage).map(([role, u]) => V.h("tr", {}, V.h("td", {}, role),
      V.h("td", { class: "num" }, u.calls), V.h("td", { class: "num" }, u.prompt_tokens + u.completion_tokens),
      V.h("td", { class: "num" }, V.fmt(u.cost_usd, "usd")), V.h("td", { class: "num" }, `${u.cache_hits}/${u.cache_misses}`)));
    return V.panel({ folds: true }, "Run",
      V.facts([["seed", page.seed], ["models", Object.entries(page.models).filter(([, v]) => v).map(([k, v]) => `${k}: ${v}`).join("; ")],
        ["ground truth", V.json(page.ground_truth)], ["versions", V.json(page.versions)], ["wall time", `${page.wall_time_s} s`]]),
      V.h("table", { class: "grid small" }, V.h("thead", {}, V.h("tr", {}, ["role", "calls", "tokens", "cost", "cache hit/miss"]
        .map((x) => V.h("th", {}, x)))), V.h("tbody", {}, rows)));
  }

  function harness(page) {
    const h = page.harness;
    const r = h.reward_info || {};
    const checks = (r.communicate_checks || []).map((c) => V.h("li", {}, c.met ? "✓ " : "✗ ", V.h("code", {}, c.info)));
    return [V.panel({ "data-testid": "outcome" }, "Harness outcome (tau2, as written)",
      V.facts([["success", V.outcomeBadge(page.trial.outcome)], ["reward", r.reward], ["termination", h.termination_reason],
        ["turns", V.h("span", { title: "counted as our arms count them: an agent output and the answers to it" },
          V.isMissing(page.trial.turns) ? "–" : String(page.trial.turns))],
        ["reward basis", V.json(r.reward_basis)], ["breakdown", V.json(r.reward_breakdown)],
        ["DB check", V.json(r.db_check)], ["harness", h.version]]),
      checks.length ? [V.h("h3", {}, "Communicate checks"), V.h("ul", { class: "check" }, checks)] : "",
      V.h("p", { class: "hint" }, "The upstream harness records no gateway, disclosure gate or holders, so the reader gives ",
        "native trials no failure type and no process measures.")),
    V.panel({ folds: true }, "Run",
      V.facts(Object.entries(page.facts).map(([k, v]) => [k, typeof v === "object" && v !== null ? V.json(v) : v])))];
  }

  /* Every trial's link key (arm/model/task/rep), from the index. */
  function trialKeys() {
    const pos = Object.fromEntries(V.index().trials.columns.map((col, i) => [col.name, i]));
    return new Set(V.index().trials.rows.map((r) => [r[pos.arm], r[pos.model], r[pos.task], r[pos.rep]].join("/")));
  }

  function sameCell(page) {
    const c = page.cell;
    const have = trialKeys();
    const link = (arm) => arm === c.arm ? V.h("strong", {}, arm)
      : have.has(`${arm}/${c.model}/${c.task}/${c.rep}`) ? V.h("a", { href: V.episodeHref(arm, c.model, c.task, c.rep) }, arm)
        : V.h("span", { class: "muted" }, arm);
    return V.h("nav", { class: "same-cell" }, "same model, task and repetition: ",
      V.arms().map((arm) => [link(arm), " "]), " · ",
      V.h("a", { href: V.href(["compare", c.model, c.task, c.rep]) }, "these side by side"), " · ",
      V.h("a", { href: V.href(["task", c.task]) }, `task ${c.task} across arms and models`));
  }

  V.episodeView = async function (parts, query = new URLSearchParams()) {
    const [arm, model, task, rep] = parts;
    const key = `${arm}/${model}/${task}/${rep}`;
    if (!trialKeys().has(key)) {
      return V.notFound(`No trial ${arm} · ${model} · task ${task} · r${rep} in this site.`,
        task in V.index().tasks ? [[V.href(["task", task]), `task ${task} in every arm and model`]] : []);
    }
    const page = await V.load(key, V.episodeData(arm, model, task, rep));
    const native = page.kind === "native";
    const side = native ? harness(page) : [outcome(page), reading(page), audit(page), checklist(page), usage(page)];
    return V.h("section", { class: "page episode", "data-key": key },
      V.h("h1", {}, `${arm} · ${model} · task ${task} · r${rep} `, V.outcomeBadge(page.trial.outcome, page.trial.failure_type)),
      await listNav(page, query), sameCell(page),
      V.h("div", { class: "split" }, timeline(page, native ? NATIVE_KINDS : EPISODE_KINDS, query), V.h("aside", {}, side)));
  };

  /* Reference items (information items and required calls) satisfied by the end of `turn`:
     the coordination reference's progress; null for a page without a reference (native). */
  function progress(page, turn) {
    if (!page || !page.reference) return null;
    const all = [...page.reference.items, ...page.reference.calls];
    return { done: all.filter((x) => x.at && x.at.turn <= turn).length, total: all.length };
  }

  /* #compare/<model>/<task>/<rep>: the same cell in every arm, aligned by turn (one band per
     turn, the arms' events of that turn side by side in narrow lanes, one lane set per arm,
     scrolling together), each band with each
     arm's reference progress, and where each arm first falls behind the first harness arm's
     (direct: the agent holds the tools). */
  V.compareView = async function (parts) {
    const [model, task, rep] = parts;
    const arms = V.arms();
    const have = trialKeys();
    if (!arms.some((arm) => have.has(`${arm}/${model}/${task}/${rep}`))) {
      return V.notFound(`No trial of ${model} on task ${task}, r${rep}, in this site.`,
        task in V.index().tasks ? [[V.href(["task", task]), `task ${task} in every arm and model`]] : []);
    }
    const pages = await Promise.all(arms.map((arm) => have.has(`${arm}/${model}/${task}/${rep}`)
      ? V.load(`${arm}/${model}/${task}/${rep}`, V.episodeData(arm, model, task, rep)) : null));
    /* Each event's turn band: its own turn, or the band before it for one without a turn. */
    const bands = new Map();
    pages.forEach((page, a) => {
      let last = 0;
      (page ? page.events : []).forEach((e, i) => {
        const t = V.isMissing(e.turn) ? last : Number(e.turn);
        last = t;
        if (!bands.has(t)) bands.set(t, arms.map(() => []));
        bands.get(t)[a].push([e, i]);
      });
    });
    const turns = [...bands.keys()].sort((x, y) => x - y);
    const baseArm = V.index().taxonomy.harness_arms[0];  /* the arm where the agent holds the tools */
    const base = arms.indexOf(baseArm);
    const departs = arms.map((arm, a) => {  /* the first turn this arm's progress is behind direct's */
      if (a === base || base < 0 || !pages[a] || !pages[base] || !pages[a].reference) return null;
      return turns.find((t) => progress(pages[a], t).done < progress(pages[base], t).done) ?? null;
    });
    const NARROW = 16;  // px per lane: four arms' lane sets side by side
    const timelines = pages.map((page) => page ? new V.Timeline(page.lanes, NARROW) : null);
    const head = arms.map((arm, a) => V.h("div", { class: "compare-head", "data-arm": arm },
      V.h("h2", {}, pages[a] ? V.h("a", { href: V.episodeHref(arm, model, task, rep) }, arm) : arm, " ",
        pages[a] ? V.outcomeBadge(pages[a].trial.outcome, pages[a].trial.failure_type) : V.badge("not in this design", "muted")),
      departs[a] !== null ? V.h("a", { class: "departs-link", href: "#", "data-testid": "departs-" + arm,
        onclick: (ev) => { ev.preventDefault(); document.getElementById(`band-${departs[a]}`).scrollIntoView({ block: "center" }); } },
      `falls behind ${baseArm} at turn ${departs[a]}`) : "",
      timelines[a] ? timelines[a].header("") : ""));
    const rows = turns.map((t) => [V.h("div", { class: "compare-turn", id: `band-${t}` }, String(t)),
      arms.map((arm, a) => {
        const p = progress(pages[a], t);
        const behind = departs[a] === t;
        return V.h("div", { class: "compare-cell" + (behind ? " departs" : ""), "data-arm": arm, "data-turn": t },
          V.h("div", { class: "cell-arm" }, arm),  /* shown where two arms share a row (viewer.css) */
          bands.get(t)[a].map(([e, i]) => {
            const [from, to, content] = drawing(e);
            const row = timelines[a].row({ when: "", from, to, kind: e.type, content, cls: "compare-row" });
            row.querySelector(".when").append(V.h("a", { href: V.href([arm, model, task, rep, "e" + i]) }, "#"));
            return row;
          }),
          p ? V.h("div", { class: "progress", title: "reference items satisfied by the end of this turn" },
            `reference ${p.done}/${p.total}`, behind ? V.badge(
              `first behind ${baseArm} (${progress(pages[base], t).done}/${p.total})`, "bad") : "") : "");
      })]);
    const grid = V.h("div", { class: "compare-grid", "data-testid": "compare" }, V.h("div", { class: "compare-turn" }, "turn"),
      head, rows);
    grid.style.setProperty("--arms", arms.length);
    return V.h("section", { class: "page" },
      V.h("h1", {}, `${model} · task ${task} · r${rep} in every arm`),
      V.h("nav", { class: "same-cell" }, V.h("a", { href: V.href(["task", task]) }, `task ${task} across arms and models`)),
      V.h("p", { class: "hint" }, "One band per turn. Under each arm, the reference items (information items and ",
        `required calls) satisfied by the end of the turn; a red mark where an arm first has fewer than ${baseArm}.`),
      grid);
  };

  /* Bring an event into view and mark it (from a #.../e<n> link). */
  V.focusEvent = function (id) {
    for (const el of document.querySelectorAll(".tl-row.focus")) el.classList.remove("focus");
    const row = document.getElementById(id);
    if (!row) return;
    row.hidden = false;
    row.classList.add("focus");
    row.scrollIntoView({ block: "center" });
  };
})();
