import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const ev = t.traceEvents || t;
const pid = +process.argv[3], from = +process.argv[4], to = +process.argv[5];
let t0 = Infinity;
for (const e of ev) if (e.ts && e.ph==='X') t0 = Math.min(t0, e.ts);
const nodes = new Map(); let samples = [], deltas = [], startTime = 0;
const profs = {};
for (const e of ev) {
  if (e.pid !== pid) continue;
  if (e.name === 'Profile') { profs[e.id] = { start: e.args.data.startTime, nodes: new Map(), samples: [], deltas: [] }; }
  if (e.name === 'ProfileChunk') {
    const p = profs[e.id] ||= { start: 0, nodes: new Map(), samples: [], deltas: [] };
    const d = e.args.data.cpuProfile || {};
    for (const n of d.nodes || []) p.nodes.set(n.id, n);
    p.samples.push(...(d.samples || [])); p.deltas.push(...(e.args.data.timeDeltas || []));
  }
}
const self = {}, incl = {};
for (const p of Object.values(profs)) {
  let ts = p.start;
  for (let i = 0; i < p.samples.length; i++) {
    ts += p.deltas[i]; const ms = (ts - t0) / 1000;
    const dt = (p.deltas[i + 1] ?? 0) / 1000;
    if (ms < from || ms >= to) continue;
    let n = p.nodes.get(p.samples[i]); if (!n) continue;
    const cf = n.callFrame; const key = c => `${c.functionName || '(anon)'} ${(c.url||'').slice(-26)}:${c.lineNumber}:${c.columnNumber}`;
    self[key(cf)] = (self[key(cf)] || 0) + dt;
    const seen = new Set();
    while (n) { const k = key(n.callFrame); if (!seen.has(k)) { incl[k] = (incl[k] || 0) + dt; seen.add(k); } n = n.parent ? p.nodes.get(n.parent) : null; }
  }
}
console.log('SELF'); for (const [k, v] of Object.entries(self).sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(v.toFixed(1).padStart(7), k);
console.log('INCL'); for (const [k, v] of Object.entries(incl).sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(v.toFixed(1).padStart(7), k);
