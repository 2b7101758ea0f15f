import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const ev = t.traceEvents || t;
const from = +process.argv[3], to = +process.argv[4];
let t0 = Infinity;
for (const e of ev) if (e.ts && e.ph==='X') t0 = Math.min(t0, e.ts);
for (const e of ev) { if (!e.cat || !e.cat.includes('user_timing')) continue; const ms=(e.ts-t0)/1000; if (ms<from||ms>=to) continue; console.log(e.pid, ms.toFixed(1), e.ph, e.name); }
