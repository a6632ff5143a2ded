import crypto from 'crypto';

/**
 * The site's only script and stylesheet, served from /static so the Content-Security-Policy can
 * forbid every inline script, handler and style. Kept as strings: the build copies .ts only.
 */
export const APP_JS = `'use strict';
(function () {
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    var t = document.createElement('textarea');
    t.value = text;
    document.body.appendChild(t);
    t.select();
    try { document.execCommand('copy'); } finally { document.body.removeChild(t); }
    return Promise.resolve();
  }
  document.addEventListener('click', function (e) {
    var b = e.target.closest ? e.target.closest('[data-copy]') : null;
    if (!b) return;
    var el = document.getElementById(b.getAttribute('data-copy'));
    if (!el) return;
    copyText(el.textContent.trim()).then(function () {
      b.textContent = 'Copied';
      b.classList.add('copied');
    }, function () {
      b.textContent = 'Select and copy manually';
    });
  });
  // Destructive forms ask first; the server does not depend on it (CSRF token + POST).
  document.addEventListener('submit', function (e) {
    var msg = e.target.getAttribute && e.target.getAttribute('data-confirm');
    if (msg && !window.confirm(msg)) e.preventDefault();
  });
  // Select menus marked data-autosubmit submit their GET form (week picker).
  document.addEventListener('change', function (e) {
    if (e.target.hasAttribute && e.target.hasAttribute('data-autosubmit') && e.target.form) e.target.form.submit();
  });
})();
`;

export const APP_CSS = `:root{--fg:#1d2330;--muted:#667085;--bg:#f6f7f9;--card:#fff;--line:#e3e6eb;--accent:#3b5bdb;--good:#2b8a3e;--warn:#c92a2a;--chip:#eef1fb}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
header.top{background:#111827;color:#fff}
header.top .in{max-width:980px;margin:0 auto;padding:10px 16px;display:flex;gap:18px;align-items:center;flex-wrap:wrap}
header.top a{color:#e5e7eb}header.top a.brand{font-weight:700;color:#fff;font-size:18px}
header.top nav{display:flex;gap:14px;flex:1;align-items:center}
header.top form.search input{padding:4px 8px;border-radius:6px;border:0;width:180px}
header.top .me{display:flex;gap:12px;align-items:center}
header.top .me form{display:inline}
.badge{display:inline-block;min-width:18px;padding:0 6px;border-radius:9px;background:var(--warn);color:#fff;font-size:12px;text-align:center;line-height:18px}
main{max-width:980px;margin:0 auto;padding:18px 16px 40px}
h1{font-size:24px;margin:6px 0 14px}h2{font-size:18px;margin:22px 0 10px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:14px 16px;margin:0 0 12px}
.muted{color:var(--muted)}.small{font-size:13px}
.tabs{display:flex;gap:6px;flex-wrap:wrap;margin:0 0 12px}
.tabs a{padding:4px 12px;border-radius:16px;background:var(--chip)}
.tabs a.on{background:var(--accent);color:#fff}
.chip{display:inline-block;padding:0 8px;border-radius:10px;background:var(--chip);font-size:12px;margin-right:4px}
.status-live{background:#d3f9d8;color:var(--good)}.status-final{background:#e7f5ff;color:#1864ab}.status-pending{background:#fff3bf;color:#8f5f00}
.post .meta{font-size:13px;color:var(--muted)}
.post h3{margin:0 0 4px;font-size:17px}
.score{font-weight:700;min-width:40px;display:inline-block}
.body{white-space:pre-wrap;overflow-wrap:anywhere}
.description{white-space:pre-line;overflow-wrap:anywhere}
.comments{list-style:none;padding-left:0}
.comments .comments{padding-left:18px;border-left:2px solid var(--line);margin-left:6px}
.comment{margin:8px 0}
.comment .meta{font-size:13px;color:var(--muted)}
table{border-collapse:collapse;width:100%}
th,td{padding:6px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
th{font-size:13px;color:var(--muted);font-weight:600}
form.inline{display:inline}
label{display:block;margin:8px 0 2px;font-weight:600;font-size:14px}
label.check{display:inline-block;font-weight:400;margin-right:12px}
textarea{width:100%;padding:6px 8px;border:1px solid var(--line);border-radius:6px;font:inherit}
ul.follows{list-style:none;padding:0;margin:0}.card h3:first-child{margin-top:0}ul.follows li{margin:2px 0}
img.avatar{border-radius:50%;vertical-align:middle;object-fit:cover}
input[type=text],input[type=email],input[type=password],input[type=url],input[type=search],select{padding:6px 8px;border:1px solid var(--line);border-radius:6px;font:inherit;min-width:240px}
button,.button{padding:6px 14px;border:0;border-radius:6px;background:var(--accent);color:#fff;font:inherit;cursor:pointer}
button.secondary{background:#868e96}button.danger{background:var(--warn)}
.notice{padding:10px 14px;border-radius:6px;margin:0 0 12px;background:#e7f5ff;border:1px solid #a5d8ff}
.error{padding:10px 14px;border-radius:6px;margin:0 0 12px;background:#fff5f5;border:1px solid #ffc9c9;color:var(--warn)}
.secret{font-family:ui-monospace,Menlo,Consolas,monospace;background:#fff9db;border:1px solid #ffe066;padding:8px;border-radius:6px;word-break:break-all}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:12px}
.pager{display:flex;justify-content:space-between;margin-top:10px}
svg.chart text{font-size:12px;fill:var(--fg)}
.unread{border-left:4px solid var(--accent)}
`;

/** A small icon, so browsers' automatic /favicon.ico request finds something. */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#111827"/><text x="16" y="22" font-family="sans-serif" font-size="16" font-weight="700" fill="#fff" text-anchor="middle">s</text></svg>`;

function version(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex').slice(0, 10);
}

/** Content-hashed URLs: the files can be cached for a year and still change on deploy. */
export const APP_JS_URL = `/static/app.js?v=${version(APP_JS)}`;
export const APP_CSS_URL = `/static/app.css?v=${version(APP_CSS)}`;
