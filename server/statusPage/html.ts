/**
 * The status page as one self-contained HTML document: readable on a phone, no panel chrome, no
 * framework, no requests but its own live stream (SSE), which replaces the services as they
 * change. Every text is escaped; the one inline script runs under a CSP nonce.
 */
import type { ServiceState, StatusDocument, StatusService } from "../contract/statusPage";

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const OVERALL: Record<ServiceState, string> = {
  serving: "All services are up",
  starting: "Some services are starting",
  degraded: "Some services are degraded",
  unknown: "The state of some services is unknown",
  down: "Some services are down",
};

const pct = (f: number | null) => (f === null ? "—" : `${(Math.floor(f * 10000) / 100).toFixed(2)}%`);
const iso = (ms: number) => new Date(ms).toISOString();
const utc = (ms: number) => `${iso(ms).slice(0, 16).replace("T", " ")} UTC`;

function serviceHtml(s: StatusService): string {
  const incidents = s.incidents.length
    ? `<ul class="inc">${s.incidents
        .map(
          (i) =>
            `<li><time datetime="${iso(i.startMs)}">${utc(i.startMs)}</time> – ${i.endMs === null ? "ongoing" : `<time datetime="${iso(i.endMs)}">${utc(i.endMs)}</time>`}: ${esc(i.cause)}</li>`,
        )
        .join("")}</ul>`
    : `<p class="muted">No incidents in the last 30 days.</p>`;
  const hosts = s.hosts?.length ? `<span class="muted"> · ${esc(s.hosts.join(", "))}</span>` : "";
  return `<section class="svc" data-state="${s.state}">
<h2><span class="dot" aria-hidden="true"></span>${esc(s.name)}${hosts}</h2>
<p class="words" data-since="${s.sinceMs ?? ""}" data-until="${s.maintenanceUntilMs ?? ""}">${esc(s.words)}</p>
<dl class="up"><div><dt>24 h</dt><dd>${pct(s.uptime["24h"])}</dd></div><div><dt>7 days</dt><dd>${pct(s.uptime["7d"])}</dd></div><div><dt>30 days</dt><dd>${pct(s.uptime["30d"])}</dd></div></dl>
<details><summary>Recent incidents (${s.incidents.length})</summary>${incidents}</details>
</section>`;
}

export function servicesHtml(doc: StatusDocument): string {
  const list = doc.services.length ? doc.services.map(serviceHtml).join("\n") : `<p class="muted">No services to show yet.</p>`;
  return `<p class="overall" data-state="${doc.overall}">${esc(OVERALL[doc.overall])}</p>\n${list}\n<p class="muted small">Updated <time datetime="${iso(doc.generatedAtMs)}">${utc(doc.generatedAtMs)}</time></p>`;
}

/** Colours at WCAG AA contrast (4.5:1) in both schemes: muted text on the cards, white on the overall banner's green, amber and red. */
const CSS = `
:root{color-scheme:light dark;--bg:#fff;--fg:#18181b;--muted:#52525b;--card:#f4f4f5;--ok:#15803d;--warn:#b45309;--bad:#b91c1c;--unk:#52525b}
@media (prefers-color-scheme:dark){:root{--bg:#09090b;--fg:#f4f4f5;--muted:#a1a1aa;--card:#18181b}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:48rem;margin:0 auto;padding:1rem}h1{font-size:1.4rem;margin:.5rem 0 1rem}h2{font-size:1.05rem;margin:0;display:flex;align-items:center;gap:.5rem;overflow-wrap:anywhere}
.svc{background:var(--card);border-radius:.75rem;padding:.9rem 1rem;margin:.75rem 0}.words{margin:.25rem 0 .5rem;font-weight:600}
.dot{width:.7rem;height:.7rem;border-radius:50%;flex:none;background:var(--unk)}
[data-state=serving] .dot{background:var(--ok)}[data-state=starting] .dot,[data-state=degraded] .dot{background:var(--warn)}[data-state=down] .dot{background:var(--bad)}
.overall{font-size:1.1rem;font-weight:700;padding:.75rem 1rem;border-radius:.75rem;color:#fff;background:var(--unk)}
.overall[data-state=serving]{background:var(--ok)}.overall[data-state=starting],.overall[data-state=degraded]{background:var(--warn)}.overall[data-state=down]{background:var(--bad)}
.up{display:flex;gap:1.5rem;margin:0;flex-wrap:wrap}.up div{min-width:5rem}.up dt{font-size:.8rem;color:var(--muted)}.up dd{margin:0;font-variant-numeric:tabular-nums}
details{margin-top:.5rem}summary{cursor:pointer;color:var(--muted)}.inc{padding-left:1.1rem;margin:.4rem 0}.muted{color:var(--muted)}.small{font-size:.85rem}
`;

/** Times in the reader's own zone, and the live stream that keeps the services current. */
const SCRIPT = `(function(){
var root=document.getElementById("services");
function local(){root.querySelectorAll("time").forEach(function(t){var d=new Date(t.getAttribute("datetime"));if(!isNaN(d))t.textContent=d.toLocaleString([], {dateStyle:"short",timeStyle:"short"});});
root.querySelectorAll(".words[data-since]").forEach(function(p){var ms=Number(p.getAttribute("data-since"));if(ms&&/ since \\d\\d:\\d\\d UTC$/.test(p.textContent)){p.textContent=p.textContent.replace(/ since .*$/," since "+new Date(ms).toLocaleTimeString([], {hour:"2-digit",minute:"2-digit"}));}});
root.querySelectorAll(".words[data-until]").forEach(function(p){var ms=Number(p.getAttribute("data-until"));if(ms&&/^Planned maintenance until .* UTC$/.test(p.textContent)){p.textContent="Planned maintenance until "+new Date(ms).toLocaleString([], {dateStyle:"short",timeStyle:"short"});}});}
local();
var url=root.getAttribute("data-events");if(!url||!window.EventSource)return;
var es=new EventSource(url);es.addEventListener("services",function(e){root.innerHTML=e.data;local();});
})();`;

export function statusPageHtml(doc: StatusDocument, opts: { eventsUrl: string; nonce: string }): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex">
<title>Service status</title><style>${CSS}</style></head>
<body><main><h1>Service status</h1>
<div id="services" data-events="${esc(opts.eventsUrl)}" aria-live="polite">
${servicesHtml(doc)}
</div></main>
<script nonce="${esc(opts.nonce)}">${SCRIPT}</script></body></html>`;
}

export function errorPageHtml(status: number, message: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>Service status</title><style>${CSS}</style></head><body><main><h1>Service status</h1><p>${esc(message)}</p><p class="muted small">${status}</p></main></body></html>`;
}
