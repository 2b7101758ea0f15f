import fs from 'fs';
const t = JSON.parse(fs.readFileSync(process.argv[2]));
const ev = t.traceEvents || t;
const tname = {};
for (const e of ev) if (e.ph === 'M' && e.name === 'thread_name') tname[e.pid + ':' + e.tid] = e.args.name;
const pid = +process.argv[3];
const fc = ev.filter(e => e.pid===pid && tname[e.pid+':'+e.tid]==='CrRendererMain' && e.ph==='X' && (e.name==='FunctionCall'||e.name==='EventDispatch'||e.name==='FireAnimationFrame'||e.name==='TimerFire'));
const agg = {};
for (const e of fc) { const d=e.args?.data||{}; const k = e.name+' '+(d.functionName||'')+' '+(d.url||'').split('/').pop()+':'+d.lineNumber+':'+d.columnNumber+' '+(d.type||''); const a=agg[k]||={n:0,ms:0,max:0}; a.n++; const v=(e.tdur??e.dur)/1000; a.ms+=v; a.max=Math.max(a.max,v); }
for (const [k,a] of Object.entries(agg).sort((x,y)=>y[1].ms-x[1].ms).slice(0,25)) console.log(a.ms.toFixed(0).padStart(7), String(a.n).padStart(6), a.max.toFixed(1).padStart(7), k);
