/* The router: the address after # names the view, so every view is a link.
     #trials?<filters>[&q=<words>]     the trials index (the default), q: only trials whose events hold the words
     #search?q=<words>                 full-text search over every event
     #tasks, #task/<id>                tasks; one task across arms and models
     #compare/<model>/<task>/<rep>     one cell in every arm, side by side
     #<arm>/<model>/<task>/<rep>[/e<n>][?...]  an episode or native run [pointing at event n]; its
                                       query keeps its filters (hide, lane) and the list it came from (in=trials&...)
     #collabsim?<filters>              CollabSim runs
     #collabsim/<task>/<condition>/<model>/<design>/s<seed>[/ev<id>]  one run */
"use strict";
(function () {
  const app = document.getElementById("app");
  let generation = 0;  // a slow page load must not overwrite the page asked for after it

  function setNav(section) {
    for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.nav === section);
  }

  /* The view for a route, and the event to point at, if any. */
  async function viewFor(parts, query) {
    const head = parts[0] || "trials";
    if (head === "trials") return [await V.trialsView(query), "trials"];
    if (head === "search") return [await V.searchView(query), "search"];
    if (head === "tasks") return [V.tasksView(query), "tasks"];
    if (head === "task") return [V.taskView(parts[1]), "tasks"];
    if (head === "compare") return [await V.compareView(parts.slice(1, 4)), "tasks"];
    if (head === "collabsim" && parts.length === 1) return [V.collabsimView(query), "collabsim"];
    if (head === "collabsim" && parts.length >= 6) return [await V.runView(parts.slice(0, 6)), "collabsim", parts[6]];
    if (parts.length >= 4) return [await V.episodeView(parts.slice(0, 4), query), "trials", parts[4]];
    return [V.notFound(`Nothing at the address ${location.hash}.`), ""];
  }

  function pageKey(parts) {
    if (parts[0] === "collabsim") return parts.length >= 6 ? parts.slice(0, 6).join("/") : null;
    return parts.length >= 4 ? parts.slice(0, 4).join("/") : null;
  }

  V.render = async function () {
    const mine = ++generation;
    const { parts, query } = V.route();
    if (!V.index()) {
      app.replaceChildren(V.errorBox("data/index.js did not load: build the site with `incognita view`."));
      return;
    }
    const shown = app.querySelector("[data-key]");
    const key = pageKey(parts);
    if (key && shown && shown.dataset.key === key && parts.length > V.keyParts(key).length) {
      V.focusEvent(parts[parts.length - 1]);  // same page, another event: no reload
      return;
    }
    let view, section, focus;
    try {
      [view, section, focus] = await viewFor(parts, query);
    } catch (err) {
      [view, section] = [V.errorBox(String(err && err.message ? err.message : err)), ""];
    }
    if (mine !== generation) return;
    setNav(section);
    app.replaceChildren(view);
    document.title = (parts.length ? parts.join(" / ") + " – " : "") + "Incognita trajectories";
    if (focus) V.focusEvent(focus);
    else window.scrollTo(0, 0);
    document.body.dataset.ready = location.hash || "#";
  };

  document.getElementById("search-slot").append(V.searchForm(""));
  window.addEventListener("hashchange", V.render);
  V.render().then(() => { V.firstRender = performance.now(); });
})();
