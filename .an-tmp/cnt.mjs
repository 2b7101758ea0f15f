import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const ev = t.traceEvents || t;
let t0 = Infinity;
for (const e of ev) if (e.ts && e.ph==='X') t0 = Math.min(t0, e.ts);
const pat = process.argv[3];
const hits = {};
for (const e of ev) { if (e.ph!=='X'||e.name!=='FunctionCall') continue; const d=e.args?.data||{}; const k=(d.url||'')+':'+d.lineNumber+':'+d.columnNumber; if (k.includes(pat)) (hits[e.pid] ||= []).push(Math.round((e.ts-t0)/1000)); }
for (const [p, ts] of Object.entries(hits)) console.log(p, ts.length, ts.slice(0,80).join(' '));
