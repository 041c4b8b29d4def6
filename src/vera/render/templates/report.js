// The HTML report's script: it unpacks the samples and shows them a page at a time.
//
// The samples are one JSON document, gzip-compressed and base64-encoded, in the
// #sample-data block; its layout is described in vera/reports/samples.py. Every element is
// built with createElement and every text set as a text node, never parsed as HTML, so text
// from the dataset or the judge can never become markup. The page allows this script by its
// hash in its content security policy; it loads nothing.
(function () {
  "use strict";
  const source = document.getElementById("sample-data");
  const list = document.getElementById("sample-list");
  const form = document.getElementById("filters");
  const unknown = document.getElementById("unknown-sample");
  if (!source || !list || !form || !unknown) { return; }
  const PAGE = Number(list.dataset.pageSize) || 50;
  const OPENED = Number(list.dataset.opened) || 0;
  const shown = document.getElementById("shown");
  const pagers = Array.from(document.querySelectorAll("nav.pager"));
  let data = null;
  let rankOf = null;      // row -> its place worst first, which names its anchor
  let detailOf = [];      // row -> its detail, where the page has it
  let haystacks = [];     // row -> lower-cased searchable text, made on first search
  let matches = [];       // rows that pass the filters, worst first
  let page = 0;
  let timer = 0;

  // Decoding: base64 -> bytes -> gunzip (the browser's own DecompressionStream) -> JSON.
  async function load() {
    if (typeof DecompressionStream !== "function") {
      throw new Error("this browser cannot decompress data (DecompressionStream is missing)");
    }
    const binary = atob(source.textContent.trim());
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i += 1) { bytes[i] = binary.charCodeAt(i); }
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function index() {
    rankOf = new Int32Array(data.rows.length);
    data.order.forEach(function (row, rank) { rankOf[row] = rank; });
    detailOf = new Array(data.rows.length);
    data.details.forEach(function (detail) { detailOf[detail.row] = detail; });
  }

  // Small DOM helpers: text only, never markup.
  // Text the RAG system or its user wrote, in any script: its own first strong character sets
  // its direction (right to left for Arabic or Hebrew), whatever the page's.
  const USER_TEXT = /(^| )(response|query-text|claim-text|evidence|context|claim-source)( |$)/;
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) {
      node.className = className;
      if (USER_TEXT.test(className)) { node.dir = "auto"; }
    }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function put(parent) {
    for (let i = 1; i < arguments.length; i += 1) {
      const child = arguments[i];
      if (child !== null && child !== undefined && child !== false) { parent.append(child); }
    }
    return parent;
  }
  function score(value) { return value === null || value === undefined ? "—" : value.toFixed(3); }
  function ms(value) {
    if (value === null || value === undefined) { return "—"; }
    return value.toLocaleString("en-US", {minimumFractionDigits: 1, maximumFractionDigits: 1}) + " ms";
  }
  function count(n) { return n.toLocaleString("en-US"); }
  function words(text) { return String(text).split("_").join(" "); }
  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  // Reading a detail: a claim's text, its cited context, its evidence.
  function claimText(detail, claim) {
    return claim.t !== undefined ? claim.t : detail.t.slice(claim.s[0], claim.s[1]);
  }
  function context(detail, position) {
    if (position === undefined || position < 0 || position >= detail.x.length) { return null; }
    const ref = detail.x[position];
    const parts = typeof ref === "number" ? [ref, null, null] : ref;
    return {text: data.contexts[parts[0]], id: parts[1], source: parts[2], number: position + 1};
  }
  function evidence(detail, claim) {
    if (claim.e === undefined) { return ""; }
    if (typeof claim.e === "string") { return claim.e; }
    const cited = context(detail, claim.cx);
    return cited ? cited.text.slice(claim.e[0], claim.e[1]) : "";
  }
  // Where the evidence lies in the cited context, [start, end], or null where it is not a
  // part of it: then, and only then, the quote is shown on its own.
  function located(ctx, claim, quote) {
    if (!ctx) { return null; }
    if (Array.isArray(claim.e)) { return claim.e; }
    const trimmed = quote.trim();
    const start = trimmed ? ctx.text.indexOf(trimmed) : -1;
    return start < 0 ? null : [start, start + trimmed.length];
  }
  function verdictBadge(verdict) {
    const symbol = el("span", null, verdict[3]);
    symbol.setAttribute("aria-hidden", "true");
    return put(el("span", "verdict " + verdict[1]), symbol, " " + verdict[2]);
  }

  // Search and filters run over every row; the text search reads a row's detail where the
  // page has it, else its id and category.
  function haystack(row) {
    let text = haystacks[row];
    if (text === undefined) {
      const values = data.rows[row];
      const detail = detailOf[row];
      const parts = [values[0], values[2] || ""];
      if (detail) {
        parts.push(detail.q || "", detail.t || "", detail.err || "");
        detail.c.forEach(function (claim) { parts.push(claimText(detail, claim), claim.r || ""); });
      }
      text = parts.join("\n").toLowerCase();
      haystacks[row] = text;
    }
    return text;
  }
  function wanted() {
    const fields = form.elements;
    const verdict = fields.namedItem("verdict").value;
    return {
      status: fields.namedItem("status").value,
      outcome: fields.namedItem("outcome").value,
      category: fields.namedItem("category").value,
      verdict: verdict ? data.verdicts.findIndex(function (v) { return v[0] === verdict; }) : -1,
      text: fields.namedItem("q").value.trim().toLowerCase(),
    };
  }
  function passes(row, want) {
    const values = data.rows[row];
    if (want.status && data.statuses[values[1]] !== want.status) { return false; }
    if (want.outcome && data.outcomes[values[7]][0] !== want.outcome) { return false; }
    if (want.category && values[2] !== want.category) { return false; }
    if (want.verdict >= 0 && !(values[5] & (1 << want.verdict))) { return false; }
    return !want.text || haystack(row).indexOf(want.text) >= 0;
  }
  function apply() {
    const want = wanted();
    matches = data.order.filter(function (row) { return passes(row, want); });
    page = 0;
    render();
  }

  function pages() { return Math.max(1, Math.ceil(matches.length / PAGE)); }
  function render() {
    page = Math.min(Math.max(page, 0), pages() - 1);
    const first = page * PAGE;
    const rows = matches.slice(first, first + PAGE);
    list.replaceChildren.apply(list, rows.map(article));
    shown.textContent = count(matches.length) + " of " + count(data.rows.length) + " samples match";
    const where = matches.length
      ? count(first + 1) + "–" + count(first + rows.length) + " of " + count(matches.length) +
        " · page " + count(page + 1) + " of " + count(pages())
      : "no sample matches";
    pagers.forEach(function (nav) {
      nav.hidden = pages() === 1;
      nav.querySelector(".page-info").textContent = where;
      nav.querySelectorAll("button").forEach(function (button) {
        const back = button.dataset.page === "first" || button.dataset.page === "prev";
        button.disabled = back ? page === 0 : page >= pages() - 1;
      });
    });
  }

  function article(row) {
    const values = data.rows[row];
    const rank = rankOf[row];
    const status = data.statuses[values[1]];
    const outcome = data.outcomes[values[7]];
    const node = el("article", "sample status-" + status + " " + outcome[1] +
      (values[4].length ? " has-failure" : ""));
    node.id = "s" + rank;
    node.dataset.sampleId = values[0];
    node.dataset.status = status;
    node.dataset.outcome = outcome[0];
    node.dataset.category = values[2] || "";
    node.dataset.verdicts = data.verdicts.filter(function (v, i) { return values[5] & (1 << i); })
      .map(function (v) { return v[0]; }).join(" ");
    const details = el("details");
    details.open = rank < OPENED;
    const detail = detailOf[row];
    put(details, summary(values, status, detail),
      detail ? body(detail, rank, status, values) : missing());
    return put(node, details);
  }
  // The sample's one badge, from its answer verdict and every gated metric (vera.outcome):
  // a failure names an unfaithful answer, then each failed metric with its score; its title
  // is the sentence that decided it.
  function outcomeBadge(values, detail) {
    const outcome = data.outcomes[values[7]];
    let label = outcome[2];
    if (outcome[0] === "fail") {
      const failed = values[4].map(function (f) { return data.metrics[f[0]] + " " + score(f[1]); });
      label = "fail: " + (values[8] ? ["unfaithful answer"] : []).concat(failed).join(", ");
    }
    const symbol = el("span", null, outcome[3]);
    symbol.setAttribute("aria-hidden", "true");
    const badge = put(el("span", "badge outcome " + outcome[1]), symbol, " " + label);
    badge.title = detail && detail.o ? detail.o : label;
    return badge;
  }
  function summary(values, status, detail) {
    const line = el("summary");
    put(line, el("span", "sid", values[0]), values[2] !== null && el("span", "badge", values[2]),
      outcomeBadge(values, detail),
      status !== "scored" && el("span", status === "error" ? "badge error" : "badge", words(status)));
    if (status === "scored" && data.primary !== null) {
      put(line, el("span", "muted small", data.primary + " " + score(values[3])));
    }
    if (values[6]) {
      put(line, el("span", "muted small", values[6] + " claim" + (values[6] === 1 ? "" : "s")));
    }
    return line;
  }
  function missing() {
    return put(el("div", "body"), el("p", "missing-detail", "This sample's full detail is not " +
      "in this file, which keeps it for the " + count(data.detailed) +
      " lowest-scoring samples; the run's JSON report has it."));
  }

  function body(detail, rank, status, values) {
    const node = el("div", "body");
    if (detail.err) {
      put(node, put(el("p", "error-box"), el("strong", null, "Error:"), " " + detail.err));
      node.lastChild.setAttribute("role", "alert");
    }
    if (detail.o) {
      const outcome = data.outcomes[values[7]];
      put(node, put(el("p", "outcome-why " + outcome[1]), el("strong", null, outcome[2] + ":"),
        " " + detail.o));
    }
    if (detail.q) {
      put(node, put(el("p", "query"), el("span", "muted", "Query:"), " ", el("span", "query-text", detail.q)));
    }
    const claims = detail.c.map(function (claim, i) {
      return {claim: claim, number: i + 1, anchor: "s" + rank + "-c" + (i + 1),
        verdict: data.verdicts[claim.v]};
    });
    if (detail.lg) {
      put(node, el("p", "small muted language", "Language: " + (detail.lg[0] || "unknown") +
        (detail.lg[1] && detail.lg[1] !== detail.lg[0] ? " · contexts: " + detail.lg[1] : "")));
    }
    if (detail.t) {
      put(node, el("h3", null, "Response"), response(detail, claims));
    } else if (detail.t === null && status !== "error") {
      put(node, el("p", "muted", "No response text available for this sample."));
    }
    if (claims.length) { put(node, el("h3", null, "Claims"), unplaced(detail, claims), cards(detail, claims)); }
    if (detail.m.length) { put(node, el("h3", null, "Metrics"), metrics(detail)); }
    if (detail.x.length) { put(node, contexts(detail)); }
    if (detail.lat !== undefined || detail.st) { put(node, latency(detail)); }
    return node;
  }
  // Whose latency it is: the pipeline call VERA timed, or the dataset's own figure; never
  // how long the judging took.
  function latency(detail) {
    const measured = data.latency === "pipeline";
    const parts = [];
    if (detail.lat !== undefined) {
      parts.push((measured ? "Pipeline latency, measured by VERA: " :
        "Latency from the dataset's latency_ms field: ") + ms(detail.lat));
    }
    (detail.st || []).forEach(function (step) { parts.push(step[0] + " " + ms(step[1])); });
    const node = el("p", "small muted latency", parts.join(" · "));
    node.title = measured ? "The time VERA measured around this sample's pipeline call"
      : "As the dataset gave it; VERA did not measure it, and it is not how long evaluation took";
    return node;
  }

  function response(detail, claims) {
    const node = el("p", "response");
    // The language picks the glyphs where scripts share code points (Japanese and Chinese Han).
    if (detail.lg && detail.lg[0]) { node.lang = detail.lg[0]; }
    const placed = claims.filter(function (c) { return c.claim.s; })
      .sort(function (a, b) { return a.claim.s[0] - b.claim.s[0]; });
    let position = 0;
    placed.forEach(function (c) {
      const start = c.claim.s[0];
      const end = c.claim.s[1];
      if (start > position) { put(node, detail.t.slice(position, start)); }
      put(node, mark(c, detail.t.slice(start, end)));
      position = end;
    });
    if (position < detail.t.length) { put(node, detail.t.slice(position)); }
    return node;
  }
  function mark(c, text) {
    const node = el("mark", "claim " + c.verdict[1]);
    node.dataset.claim = c.claim.id;
    node.dataset.verdict = c.verdict[0];
    // Verdict and reason only: the evidence is shown once, in the claim's card.
    node.title = "Claim " + c.number + ": " + c.verdict[2] + (c.claim.r ? " — " + c.claim.r : "");
    const link = el("a", "to-claim", text);
    link.href = "#" + c.anchor;
    const tag = el("sup", null, c.verdict[3] + c.number);
    tag.setAttribute("aria-hidden", "true");
    return put(node, link, tag, el("span", "sr", " (claim " + c.number + ": " + c.verdict[2] + ")"));
  }
  function unplaced(detail, claims) {
    const count = claims.filter(function (c) { return !c.claim.s; }).length;
    if (!detail.t || !count) { return null; }
    return el("p", "small muted", count + " claim(s) could not be placed in the response text and are listed only.");
  }

  function cards(detail, claims) {
    const node = el("ol", "claims");
    claims.forEach(function (c) {
      const card = el("details", "claim-card " + c.verdict[1] + (c.claim.s ? "" : " claim"));
      card.id = c.anchor;
      card.dataset.claim = c.claim.id;
      card.dataset.verdict = c.verdict[0];
      const head = put(el("summary"), el("span", "muted", c.number + "."), " ", verdictBadge(c.verdict),
        " ", el("span", "claim-text", claimText(detail, c.claim)));
      put(node, put(el("li"), put(card, head, facts(detail, c))));
    });
    return node;
  }
  function facts(detail, c) {
    const claim = c.claim;
    const terms = el("dl");
    function row(term, value) { put(terms, el("dt", null, term), put(el("dd"), value)); }
    const verdict = put(el("span"), c.verdict[2]);
    if (claim.ag !== undefined) {
      put(verdict, " ", el("span", "muted", "(" + Math.round(claim.ag * 100) + "% of judge draws agreed)"));
    }
    row("Verdict", verdict);
    if (claim.en !== undefined) {
      row("P(supported)", put(el("span"), claim.en.toFixed(2) + " ",
        el("span", "muted", "(the judge's probability that the contexts support this claim)")));
    }
    if (claim.r) { row("Reason", claim.r); }
    // The evidence is shown once: highlighted in its cited context where it is a part of it,
    // else on its own.
    const ctx = context(detail, claim.cx);
    const quote = evidence(detail, claim);
    const at = located(ctx, claim, quote);
    if (!ctx || (quote && !at)) {
      row("Evidence", quote ? el("blockquote", "evidence", quote) : el("span", "muted", "none quoted"));
    }
    // The source the verdict rests on ("tool track_order, turn 3", a document's source).
    if (claim.src) { row("Source", el("span", "claim-source small", "source: " + claim.src)); }
    if (claim.qf !== undefined) { row("Quote found", found(claim, quote)); }
    row("Cited context", cited(claim, ctx, at, quote));
    return terms;
  }
  function found(claim, quote) {
    if (claim.qf) { return el("span", "ok", "yes, verbatim in the cited context"); }
    return el("span", "bad", quote ? "no — the judge's quote is not in the context" : "no — the judge gave no quote");
  }
  function cited(claim, ctx, at, quote) {
    if (!ctx) {
      if (claim.cx === undefined) { return el("span", "muted", "none"); }
      return put(el("span"), "context " + (claim.cx + 1) + " ", el("span", "muted", "(text not available)"));
    }
    const named = ctx.id || ctx.source;
    let note = "";
    if (at) { note = " · the judge's evidence highlighted"; } else if (!quote) { note = " · the judge quoted nothing"; }
    const label = el("div", "small muted", "Context " + ctx.number + (named ? " (" + named + ")" : "") + note);
    const block = el("blockquote", "context");
    if (at) {
      put(block, ctx.text.slice(0, at[0]), el("mark", "evidence", ctx.text.slice(at[0], at[1])), ctx.text.slice(at[1]));
    } else {
      put(block, ctx.text);
    }
    return put(el("span"), label, block);
  }

  function metrics(detail) {
    const table = el("table", "metrics");
    const head = put(el("tr"), el("th", null, "Metric"), el("th", "num", "Score"), el("th", null, "Result"), el("th", null, "Why"));
    const rows = el("tbody");
    detail.m.forEach(function (m) {
      const row = put(el("tr"), el("td", null, data.metrics[m[0]]), el("td", "num", score(m[1])),
        put(el("td"), result(m, detail.k || 0)), el("td", "small", m[4]));
      row.dataset.metric = data.metrics[m[0]];
      put(rows, row);
    });
    return put(el("div", "table-wrap"), put(table, put(el("thead"), head), rows));
  }
  // A metric's pass or fail with the threshold it was held to; a pass on a sample with an
  // unsupported (no evidence) or contradicted claim says so, in amber, rather than read as a
  // plain green pass.
  function result(m, unsupported) {
    if (m[2] === null) {
      const none = el("span", "badge", "n/a");
      none.title = words(m[3]);
      return none;
    }
    let bound = "";
    if (m[5] !== undefined && m[5] !== null) {
      bound = " (threshold " + (data.lower.indexOf(data.metrics[m[0]]) >= 0 ? "≤ " : "≥ ") + String(m[5]) + ")";
    }
    if (!m[2]) { return el("span", "badge fail", "fail" + bound); }
    if (!unsupported) { return el("span", "badge pass", "pass" + bound); }
    return el("span", "badge warn", "pass" + bound + " · " + plural(unsupported, "unsupported or contradicted claim"));
  }
  function contexts(detail) {
    const node = put(el("details", "contexts"), el("summary", null, "Retrieved contexts (" + detail.x.length + ")"));
    const items = el("ol");
    detail.x.forEach(function (ref, position) {
      const ctx = context(detail, position);
      const item = el("li");
      if (ctx.id || ctx.source) { put(item, el("div", "small muted", (ctx.id || "") + " " + (ctx.source || ""))); }
      put(items, put(item, el("blockquote", null, ctx.text)));
    });
    return put(node, items);
  }

  // A link to a sample or claim (#s12, #s12-c3: its place worst first) or to a sample by its
  // id (#id=<the id, URL-encoded>, as `vera view` links runs) opens it, turning to its page
  // first and clearing filters that hide it.
  function linked(hash) {
    const place = /^#s(\d+)(?:-c(\d+))?$/.exec(hash);
    if (place) {
      return Number(place[1]) < data.order.length ? {rank: Number(place[1]), claim: place[2]} : null;
    }
    const named = /^#id=(.*)$/.exec(hash);
    if (!named) { return null; }
    let id = named[1];
    try { id = decodeURIComponent(id); } catch (error) { /* not encoded: the id as written */ }
    const rank = data.order.findIndex(function (row) { return data.rows[row][0] === id; });
    return {rank: rank, id: id};
  }
  function reveal(hash) {
    const found = linked(hash);
    if (!found) { return; }
    unknown.hidden = found.rank >= 0;
    if (found.rank < 0) {
      unknown.textContent = "This report has no sample with the id “" + found.id + "”.";
      return;
    }
    const row = data.order[found.rank];
    let at = matches.indexOf(row);
    if (at < 0) {
      form.reset();
      apply();
      at = matches.indexOf(row);
    }
    if (Math.floor(at / PAGE) !== page) {
      page = Math.floor(at / PAGE);
      render();
    }
    const sample = document.getElementById("s" + found.rank);
    sample.querySelector("details").open = true;
    const target = found.claim ? document.getElementById("s" + found.rank + "-c" + found.claim) : sample;
    if (target && target.tagName === "DETAILS") { flash(target); }
    if (target) { target.scrollIntoView(); }
  }
  function flash(card) {
    card.open = true;
    card.classList.add("flash");
    window.setTimeout(function () { card.classList.remove("flash"); }, 1500);
  }

  function listen() {
    form.hidden = false;
    // The search box is read as it is typed; its "change" on losing focus must not redraw the
    // page (and close the sample just opened), so only the selects' changes apply at once.
    form.addEventListener("change", function (event) {
      if (event.target.name !== "q") { apply(); }
    });
    form.addEventListener("input", function (event) {
      if (event.target.name !== "q") { return; }
      window.clearTimeout(timer);
      timer = window.setTimeout(apply, 150);
    });
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    pagers.forEach(function (nav) {
      nav.addEventListener("click", function (event) {
        const button = event.target.closest("button[data-page]");
        if (!button) { return; }
        const to = {first: 0, prev: page - 1, next: page + 1, last: pages() - 1}[button.dataset.page];
        page = to;
        render();
        if (nav.id === "pager-bottom") { form.scrollIntoView(); }
      });
    });
    list.addEventListener("click", function (event) {
      const link = event.target.closest ? event.target.closest("a.to-claim") : null;
      const card = link ? document.getElementById(link.getAttribute("href").slice(1)) : null;
      if (card && card.tagName === "DETAILS") { flash(card); }
    });
    window.addEventListener("hashchange", function () { reveal(window.location.hash); });
  }

  load().then(function (document_) {
    data = document_;
    index();
    listen();
    apply();
    if (window.location.hash) { reveal(window.location.hash); }
    list.dataset.state = "ready";
    performance.mark("vera-ready");
  }).catch(function (error) {
    list.dataset.state = "failed";
    list.replaceChildren(el("p", "notice", "The samples could not be shown: " + error.message));
  });
}());
