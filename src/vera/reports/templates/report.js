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
  if (!source || !list || !form) { return; }
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
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) { node.className = className; }
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
      category: fields.namedItem("category").value,
      verdict: verdict ? data.verdicts.findIndex(function (v) { return v[0] === verdict; }) : -1,
      text: fields.namedItem("q").value.trim().toLowerCase(),
    };
  }
  function passes(row, want) {
    const values = data.rows[row];
    if (want.status && data.statuses[values[1]] !== want.status) { return false; }
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
    const node = el("article", "sample status-" + status + (values[4].length ? " has-failure" : ""));
    node.id = "s" + rank;
    node.dataset.sampleId = values[0];
    node.dataset.status = status;
    node.dataset.category = values[2] || "";
    node.dataset.verdicts = data.verdicts.filter(function (v, i) { return values[5] & (1 << i); })
      .map(function (v) { return v[0]; }).join(" ");
    const details = el("details");
    details.open = rank < OPENED;
    const detail = detailOf[row];
    put(details, summary(values, status), detail ? body(detail, rank, status) : missing());
    return put(node, details);
  }
  function summary(values, status) {
    const line = el("summary");
    put(line, el("span", "sid", values[0]), values[2] !== null && el("span", "badge", values[2]),
      el("span", status === "error" ? "badge error" : "badge", words(status)));
    if (status === "scored" && data.primary !== null) {
      put(line, put(el("span"), data.primary + " ", el("strong", null, score(values[3]))));
    }
    if (values[4].length) {
      const names = values[4].map(function (m) { return data.metrics[m]; });
      put(line, el("span", "bad small", "fails " + names.join(", ")));
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

  function body(detail, rank, status) {
    const node = el("div", "body");
    if (detail.err) {
      put(node, put(el("p", "error-box"), el("strong", null, "Error:"), " " + detail.err));
      node.lastChild.setAttribute("role", "alert");
    }
    if (detail.q) { put(node, put(el("p", "query"), el("span", "muted", "Query:"), " " + detail.q)); }
    const claims = detail.c.map(function (claim, i) {
      return {claim: claim, number: i + 1, anchor: "s" + rank + "-c" + (i + 1),
        verdict: data.verdicts[claim.v]};
    });
    if (detail.t) {
      put(node, el("h3", null, "Response"), response(detail, claims));
    } else if (detail.t === null && status !== "error") {
      put(node, el("p", "muted", "No response text available for this sample."));
    }
    if (claims.length) { put(node, el("h3", null, "Claims"), unplaced(detail, claims), cards(detail, claims)); }
    if (detail.m.length) { put(node, el("h3", null, "Metrics"), metrics(detail)); }
    if (detail.x.length) { put(node, contexts(detail)); }
    if (detail.lat !== undefined || detail.st) {
      const parts = ["Latency " + ms(detail.lat)];
      (detail.st || []).forEach(function (step) { parts.push(step[0] + " " + ms(step[1])); });
      put(node, el("p", "small muted", parts.join(" · ")));
    }
    return node;
  }

  function response(detail, claims) {
    const node = el("p", "response");
    const placed = claims.filter(function (c) { return c.claim.s; })
      .sort(function (a, b) { return a.claim.s[0] - b.claim.s[0]; });
    let position = 0;
    placed.forEach(function (c) {
      const start = c.claim.s[0];
      const end = c.claim.s[1];
      if (start > position) { put(node, detail.t.slice(position, start)); }
      put(node, mark(detail, c, detail.t.slice(start, end)));
      position = end;
    });
    if (position < detail.t.length) { put(node, detail.t.slice(position)); }
    return node;
  }
  function mark(detail, c, text) {
    const node = el("mark", "claim " + c.verdict[1]);
    node.dataset.claim = c.claim.id;
    node.dataset.verdict = c.verdict[0];
    let title = "Claim " + c.number + ": " + c.verdict[2] + (c.claim.r ? " — " + c.claim.r : "");
    const quote = evidence(detail, c.claim);
    if (quote) { title += " · evidence: “" + (quote.length > 240 ? quote.slice(0, 237) + "..." : quote) + "”"; }
    node.title = title;
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
    const quote = evidence(detail, claim);
    row("Evidence", quote ? el("blockquote", null, quote) : el("span", "muted", "none quoted"));
    row("Quote found", found(claim, quote));
    row("Cited context", cited(detail, claim, quote));
    return terms;
  }
  function found(claim, quote) {
    if (claim.qf === undefined) { return el("span", "muted", "not checked"); }
    if (claim.qf) { return el("span", "ok", "yes, verbatim in the cited context"); }
    return el("span", "bad", quote ? "no — the judge's quote is not in the context" : "no — the judge gave no quote");
  }
  function cited(detail, claim, quote) {
    const ctx = context(detail, claim.cx);
    if (!ctx) {
      if (claim.cx === undefined) { return el("span", "muted", "none"); }
      return put(el("span"), "context " + (claim.cx + 1) + " ", el("span", "muted", "(text not available)"));
    }
    const named = ctx.id || ctx.source;
    const label = el("div", "small muted", "Context " + ctx.number + (named ? " (" + named + ")" : ""));
    const block = el("blockquote", "context");
    let start = -1;
    let end = -1;
    if (Array.isArray(claim.e)) {
      start = claim.e[0];
      end = claim.e[1];
    } else if (quote.trim()) {
      start = ctx.text.indexOf(quote.trim());
      end = start + quote.trim().length;
    }
    if (start < 0) {
      put(block, ctx.text);
    } else {
      put(block, ctx.text.slice(0, start), el("mark", "evidence", ctx.text.slice(start, end)), ctx.text.slice(end));
    }
    return put(el("span"), label, block);
  }

  function metrics(detail) {
    const table = el("table", "metrics");
    const head = put(el("tr"), el("th", null, "Metric"), el("th", "num", "Score"), el("th", null, "Result"), el("th", null, "Why"));
    const rows = el("tbody");
    detail.m.forEach(function (m) {
      const passed = m[2] === null ? el("span", "badge", "n/a")
        : el("span", m[2] ? "badge pass" : "badge fail", m[2] ? "pass" : "fail");
      put(rows, put(el("tr"), el("td", null, data.metrics[m[0]]), el("td", "num", score(m[1])),
        put(el("td"), passed), el("td", "small", m[4])));
    });
    return put(table, put(el("thead"), head), rows);
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

  // A link to a sample or claim (#s12, #s12-c3) opens it, turning to its page first.
  function reveal(hash) {
    const found = /^#s(\d+)(?:-c(\d+))?$/.exec(hash);
    if (!found || Number(found[1]) >= data.order.length) { return; }
    const row = data.order[Number(found[1])];
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
    const sample = document.getElementById("s" + found[1]);
    sample.querySelector("details").open = true;
    const target = found[2] ? document.getElementById(hash.slice(1)) : sample;
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
