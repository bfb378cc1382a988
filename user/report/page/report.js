// SPDX-License-Identifier: MIT
// gtrace-bpf report: the page's code.  It reads the one JSON document the
// program embedded (#gt-data, described in user/report/report.c), fills
// the sections, draws the timeline on a canvas of its own and the charts
// with uPlot.  Every number it shows comes from that document: the tables
// are the rows of `gtrace-bpf stats --format json`, which it holds whole.
'use strict';
(function () {
	const D = JSON.parse(document.getElementById('gt-data').textContent);
	const REPORTS = {};
	for (const r of (D.stats && D.stats.reports) || [])
		REPORTS[r.report] = r.rows;

	// ---- formatting ---------------------------------------------------

	const NF = new Intl.NumberFormat('en-US');
	const int = v => v === null || v === undefined ? '-' : NF.format(v);
	function dur(ns) {
		if (ns === null || ns === undefined)
			return '-';
		const a = Math.abs(ns);
		if (a < 1e3) return ns.toFixed(0) + ' ns';
		if (a < 1e6) return (ns / 1e3).toPrecision(3) + ' µs';
		if (a < 1e9) return (ns / 1e6).toPrecision(3) + ' ms';
		return (ns / 1e9).toPrecision(4) + ' s';
	}
	function bytes(b) {
		if (b === null || b === undefined)
			return '-';
		const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
		let i = 0;
		while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
		return (i ? b.toPrecision(3) : String(b)) + ' ' + u[i];
	}
	const pct = v => v === null || v === undefined ? '-' : v.toFixed(1) + ' %';

	function el(tag, attrs, ...kids) {
		const e = document.createElement(tag);
		for (const [k, v] of Object.entries(attrs || {})) {
			if (v === undefined || v === null) continue;
			if (k === 'class') e.className = v;
			else if (k === 'text') e.textContent = v;
			else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
			else e.setAttribute(k, v);
		}
		for (const k of kids)
			if (k !== null && k !== undefined)
				e.append(k instanceof Node ? k : document.createTextNode(String(k)));
		return e;
	}
	const body = id => document.querySelector('#' + id + ' .body');
	const missing = text => el('div', { class: 'missing' }, text);

	// A horizontal bar of share (0..1) of the row's table: an SVG rect.
	function bar(share, color) {
		const ns = 'http://www.w3.org/2000/svg';
		const svg = document.createElementNS(ns, 'svg');
		const r = document.createElementNS(ns, 'rect');
		svg.setAttribute('width', '170');
		svg.setAttribute('height', '12');
		r.setAttribute('width', String(Math.max(share > 0 ? 1 : 0, Math.round(170 * share))));
		r.setAttribute('height', '12');
		r.setAttribute('fill', color || '#4f86c6');
		svg.append(r);
		return el('td', { class: 'bar' }, svg);
	}

	// A table of cols [{title, get(row) -> text or node, cls}] over rows;
	// attrs(row) gives each <tr> its data attributes.
	function table(cols, rows, attrs) {
		const t = el('table');
		t.append(el('tr', {}, ...cols.map(c => el('th', { class: c.cls }, c.title))));
		for (const r of rows) {
			const tr = el('tr', attrs ? attrs(r) : {});
			for (const c of cols) {
				const v = c.get(r);
				tr.append(v instanceof Element && v.tagName === 'TD' ? v : el('td', { class: c.cls }, v));
			}
			t.append(tr);
		}
		return t;
	}

	function hashColor(s, sat, light) {
		let h = 2166136261;
		for (let i = 0; i < s.length; i++)
			h = Math.imul(h ^ s.charCodeAt(i), 16777619);
		return 'hsl(' + ((h >>> 0) % 360) + ',' + (sat || 55) + '%,' + (light || 55) + '%)';
	}

	// Each section draws on its own: one that fails says so and leaves the
	// others (and logs the error, which the tests count).
	function section(id, fn) {
		try {
			fn();
		} catch (e) {
			console.error('section ' + id + ': ' + e);
			const b = body(id) || document.getElementById(id);
			if (b) b.append(el('div', { class: 'banner bad' }, 'This section could not be drawn: ' + e));
		}
	}

	// ---- the timeline's data ------------------------------------------

	const TL = D.timeline;
	const STR = TL.strings;
	const T_END = Math.max(TL.end, 1);
	const lanes = TL.lanes.map((l, idx) => {
		if (l.kind === 'counter') {
			// a GPU metric: points (time, value), each the mean up to the next
			const n = l.points.length / 2, lane = { idx, kind: 'counter', device: l.device, metric: l.metric,
				unit: l.unit, samples: l.samples, n, start: new Float64Array(n), value: new Float64Array(n), max: 0 };
			let t = 0;
			for (let i = 0; i < n; i++) {
				t += l.points[2 * i];
				lane.start[i] = t;
				lane.value[i] = l.points[2 * i + 1];
				lane.max = Math.max(lane.max, lane.value[i]);
			}
			if (lane.unit === '%') lane.max = Math.max(lane.max, 100);
			return lane;
		}
		const f = TL.fields[l.kind], k = f.length, n = l.ev.length / k;
		const lane = { idx, kind: l.kind, pid: l.pid, tid: l.tid, device: l.device, rank: l.rank, host: l.host,
			stream: l.stream, context: l.context, events: l.events, omitted: l.omitted, n,
			start: new Float64Array(n), dur: new Float64Array(n), maxDur: 0,
			open: new Set(l.open), depth: 0 };
		const col = name => f.indexOf(name);
		const cn = col('name'), ca = col('aux'), cs = col('state'), cd = col('depth'),
			cl = col('launch_lane'), cg = col('launch_gap'), cb = col('bytes'), cc = col('causality');
		lane.name = new Int32Array(n);
		lane.aux = new Float64Array(n);
		if (l.kind === 'gpu') {
			lane.link = new Int32Array(n);
			lane.linkGap = new Float64Array(n);
			lane.causality = new Uint8Array(n);
		}
		let t = 0;
		for (let i = 0; i < n; i++) {
			const o = i * k;
			t += l.ev[o];
			lane.start[i] = t;
			lane.dur[i] = l.ev[o + 1];
			if (lane.dur[i] > lane.maxDur) lane.maxDur = lane.dur[i];
			lane.name[i] = cn >= 0 ? l.ev[o + cn] : -1;
			if (ca >= 0) lane.aux[i] = l.ev[o + ca];
			if (cs >= 0) lane.aux[i] = l.ev[o + cs];
			if (cb >= 0) lane.aux[i] = l.ev[o + cb];
			if (cd >= 0) {
				lane.aux[i] = l.ev[o + cd];
				lane.depth = Math.max(lane.depth, l.ev[o + cd] + 1);
			}
			if (cl >= 0) {
				lane.link[i] = l.ev[o + cl];
				lane.linkGap[i] = l.ev[o + cg];
				lane.causality[i] = l.ev[o + cc];
			}
		}
		lane.busy = new Float64Array(TL.bins);
		lane.count = new Uint32Array(TL.bins);
		for (let i = 0; i + 2 < l.bins.length; i += 3) {
			lane.busy[l.bins[i]] = l.bins[i + 1];
			lane.count[l.bins[i]] = l.bins[i + 2];
		}
		return lane;
	});
	// GPU work by the call it came from: "lane:start" of the call
	const byLaunch = new Map();
	for (const l of lanes) {
		if (l.kind !== 'gpu') continue;
		for (let i = 0; i < l.n; i++) {
			if (l.link[i] < 0) continue;
			const key = l.link[i] + ':' + (l.start[i] - l.linkGap[i]);
			if (!byLaunch.has(key)) byLaunch.set(key, []);
			byLaunch.get(key).push([l.idx, i]);
		}
	}
	const procName = new Map((TL.processes || []).map(p => [p.pid, p.name]));
	const thrName = new Map((TL.threads || []).map(t => [t.tid, t.name]));

	// ---- rows: captures, processes -> threads, GPUs -> streams --------

	const ROW_H = 18, HEAD_H = 20, AXIS_H = 24, LABEL_W = 210, COUNTER_H = 22;
	const rows = [];
	// head rows folded; the threads of a process that made no CUDA call
	// (pool threads, loaders) start folded into one row ('i' keys: shown
	// when in the set)
	const collapsed = new Set();
	// a thread's lanes (its calls, off-CPU time, NVTX ranges), not a GPU's
	const onCpu = l => l.kind === 'calls' || l.kind === 'nccl' || l.kind === 'offcpu' || l.kind === 'nvtx';
	// Of a GPU's metric lanes, those shown unfolded: all of a few; of more,
	// SM activity (the utilization where there is none), tensor activity,
	// DRAM bandwidth, PCIe, and NVLink where it carried anything, in that
	// order (NVML with GPM gives 22 lanes a GPU).
	const KEY_METRICS = ['sm_active', 'tensor_active', 'dram_bw', 'pcie_tx', 'pcie_rx', 'nvlink_tx', 'nvlink_rx'];
	function keyMetrics(counters) {
		if (counters.length <= 8)
			return counters;
		const by = new Map(counters.map(l => [l.metric, l]));
		const out = [];
		if (!by.has('sm_active') && by.has('gpu_util')) out.push(by.get('gpu_util'));
		for (const m of KEY_METRICS) {
			const l = by.get(m);
			if (l && (!m.startsWith('nvlink') || l.max > 0)) out.push(l);
		}
		return out;
	}
	function buildRows() {
		rows.length = 0;
		if ((D.captures || []).length || (TL.triggers || []).length || steadySpans().length)
			rows.push({ type: 'capture', label: 'steady state, capture ranges, triggers', h: ROW_H });
		const pids = [...new Set(lanes.filter(onCpu).map(l => l.pid))].sort((a, b) => a - b);
		for (const pid of pids) {
			const key = 'p' + pid;
			rows.push({ type: 'head', key, label: (procName.get(pid) || 'process') + ' (pid ' + pid + ')', h: HEAD_H });
			if (collapsed.has(key)) continue;
			const mine = lanes.filter(l => onCpu(l) && l.pid === pid);
			const tids = [...new Set(mine.map(l => l.tid))].sort((a, b) => a - b);
			const cuda = new Set(mine.filter(l => l.kind === 'calls' || l.kind === 'nccl').map(l => l.tid));
			const order = { calls: 0, nccl: 1, offcpu: 2, nvtx: 3 };
			const laneRows = tid => {
				for (const l of mine.filter(m => m.tid === tid).sort((a, b) => order[a.kind] - order[b.kind])) {
					const what = { calls: 'CUDA calls', nccl: 'NCCL', offcpu: 'off-CPU', nvtx: 'NVTX' }[l.kind];
					rows.push({ type: 'lane', lane: l, label: (thrName.get(tid) || 'thread') + ' ' + tid + ': ' + what,
						h: l.kind === 'nvtx' ? Math.max(1, Math.min(l.depth, 8)) * 14 + 4 : ROW_H });
				}
			};
			for (const tid of tids.filter(t => cuda.has(t)))
				laneRows(tid);
			const idle = tids.filter(t => !cuda.has(t));
			if (!idle.length) continue;
			const ikey = 'i' + pid;
			rows.push({ type: 'head', key: ikey, fold: true, h: HEAD_H,
				label: idle.length + ' thread' + (idle.length === 1 ? '' : 's') + ' without CUDA calls' });
			if (collapsed.has(ikey))
				for (const tid of idle)
					laneRows(tid);
		}
		const devs = [...new Set(lanes.filter(l => l.kind === 'gpu' || l.kind === 'counter').map(l => l.device))].sort((a, b) => a - b);
		for (const dev of devs) {
			const key = 'g' + dev;
			rows.push({ type: 'head', key, label: 'GPU ' + dev, h: HEAD_H });
			if (collapsed.has(key)) continue;
			for (const l of lanes.filter(m => m.kind === 'gpu' && m.device === dev)
				.sort((a, b) => a.pid - b.pid || a.stream - b.stream))
				rows.push({ type: 'lane', lane: l, label: 'stream ' + l.stream + ' (pid ' + l.pid + ')', h: ROW_H });
			// the GPU metrics that answer a question (how busy its SMs and
			// tensor cores, its memory, its links) shown; the rest folded
			const counters = lanes.filter(m => m.kind === 'counter' && m.device === dev);
			const shown = keyMetrics(counters);
			const counterRow = l => rows.push({ type: 'counter', lane: l, label: l.metric + ' (' + l.unit + ', max ' + +l.max.toPrecision(4) + ')', h: COUNTER_H });
			for (const l of shown)
				counterRow(l);
			const rest = counters.filter(l => !shown.includes(l));
			if (!rest.length) continue;
			const mkey = 'm' + dev;
			rows.push({ type: 'head', key: mkey, fold: true, h: HEAD_H,
				label: rest.length + ' more GPU metric' + (rest.length === 1 ? '' : 's') + ' (' + rest.map(l => l.metric).join(', ') + ')' });
			if (collapsed.has(mkey))
				for (const l of rest)
					counterRow(l);
		}
		let y = AXIS_H;
		for (const r of rows) { r.y = y; y += r.h; }
		return y;
	}

	// ---- the timeline: view, drawing, interaction ---------------------

	const canvas = document.getElementById('tl-canvas');
	const scroll = document.getElementById('tl-scroll');
	const tip = document.getElementById('tl-tip');
	const detail = document.getElementById('tl-detail');
	const ctx = canvas.getContext('2d');
	const view = { v0: 0, v1: T_END };
	let hover = null, selected = null, W = 800, H = 100, axis = [];

	const CALL_COLORS = { launch: '#4f86c6', memcpy: '#3c9d5d', memset: '#5bb5a2', sync: '#d9534f',
		alloc: '#9467bd', free: '#b59ad6', module: '#8c8c8c', context: '#8c8c8c', stream: '#a0a0a0',
		event: '#c7a33b', marker: '#8c8c8c', init: '#8c8c8c' };
	const OFF_COLORS = { 0: '#e5b84b', 1: '#9aa5b1', 2: '#b0413e' };
	function eventColor(l, i) {
		if (l.kind === 'calls')
			return CALL_COLORS[(TL.call_types || {})[l.name[i]]] || '#8c8c8c';
		if (l.kind === 'offcpu')
			return OFF_COLORS[l.aux[i]] || '#6b6b6b';
		const name = STR[l.name[i]] || '';
		if (l.kind === 'gpu' && name.startsWith('memcpy')) return '#3c9d5d';
		if (l.kind === 'gpu' && name === 'memset') return '#5bb5a2';
		return hashColor(name, l.kind === 'nvtx' ? 45 : 60, l.kind === 'nvtx' ? 68 : 52);
	}

	const X = t => LABEL_W + (t - view.v0) / (view.v1 - view.v0) * (W - LABEL_W);
	const T = x => view.v0 + (x - LABEL_W) / (W - LABEL_W) * (view.v1 - view.v0);

	function niceStep(span, px) {
		const raw = span / Math.max(1, px / 110), p = Math.pow(10, Math.floor(Math.log10(raw)));
		for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
		return 10 * p;
	}

	// The axis' ticks of the view [v0, v1] at step: their times and labels,
	// one unit for all (the view's end's) with the decimals the step needs,
	// so that ticks zoomed in far from 0 do not read alike.
	function axisTicks(v0, v1, step) {
		const a = Math.max(Math.abs(v0), Math.abs(v1), step);
		const [u, name] = a < 1e3 ? [1, 'ns'] : a < 1e6 ? [1e3, 'µs'] : a < 1e9 ? [1e6, 'ms'] : [1e9, 's'];
		const dec = Math.min(9, Math.max(0, Math.ceil(-Math.log10(step / u) - 1e-9)));
		const ticks = [];
		for (let i = Math.ceil(v0 / step); i * step <= v1; i++)
			ticks.push({ t: i * step, label: (i * step / u).toFixed(dec) + ' ' + name });
		return ticks;
	}

	// The first event of l that may still be visible at t.
	function firstAt(l, t) {
		let lo = 0, hi = l.n;
		const want = t - l.maxDur;
		while (lo < hi) {
			const m = (lo + hi) >> 1;
			if (l.start[m] < want) lo = m + 1; else hi = m;
		}
		return lo;
	}

	// Bins where events were left out: the share of time they cover.
	function drawBins(l, y, h) {
		const bw = TL.bin_ns, b0 = Math.max(0, Math.floor(view.v0 / bw)), b1 = Math.min(TL.bins - 1, Math.floor(view.v1 / bw));
		const pxPerBin = bw / (view.v1 - view.v0) * (W - LABEL_W);
		ctx.fillStyle = 'rgba(120,140,160,0.45)';
		if (pxPerBin >= 1) {
			for (let b = b0; b <= b1; b++) {
				if (!l.count[b] && !l.busy[b]) continue;
				const f = Math.min(1, l.busy[b] / bw), hh = Math.max(2, f * (h - 2));
				const x0 = Math.max(LABEL_W, X(b * bw)), x1 = Math.min(W, X((b + 1) * bw));
				ctx.fillRect(x0, y + h - 1 - hh, Math.max(1, x1 - x0), hh);
			}
			return;
		}
		// several bins a pixel: their mean share
		let px = -1, sum = 0, nb = 0, any = false;
		const flush = () => {
			if (px >= LABEL_W && any) {
				const hh = Math.max(2, Math.min(1, sum / (nb * bw)) * (h - 2));
				ctx.fillRect(px, y + h - 1 - hh, 1, hh);
			}
		};
		for (let b = b0; b <= b1; b++) {
			const x = Math.floor(X(b * bw));
			if (x !== px) { flush(); px = x; sum = 0; nb = 0; any = false; }
			sum += l.busy[b]; nb++;
			if (l.count[b] || l.busy[b]) any = true;
		}
		flush();
	}

	function drawLane(r) {
		const l = r.lane, y = r.y + 2, h = r.h - 4;
		if (l.omitted > 0) drawBins(l, y, h);
		const nsPerPx = (view.v1 - view.v0) / (W - LABEL_W);
		let lastPx = -1, lastColor = '';
		for (let i = firstAt(l, view.v0); i < l.n && l.start[i] <= view.v1; i++) {
			const s = l.start[i], e = s + l.dur[i];
			if (e < view.v0) continue;
			const x0 = Math.max(LABEL_W, X(s)), x1 = Math.min(W, X(e));
			let yy = y, hh = h;
			if (l.kind === 'nvtx') { yy = r.y + 2 + l.aux[i] * 14; hh = 12; }
			const color = eventColor(l, i);
			if (x1 - x0 < 1) {
				// sub-pixel events: one mark a pixel and colour
				const px = Math.floor(x0);
				if (px === lastPx && color === lastColor) continue;
				lastPx = px; lastColor = color;
				ctx.fillStyle = color;
				ctx.fillRect(px, yy, 1, hh);
				continue;
			}
			ctx.fillStyle = color;
			ctx.fillRect(x0, yy, x1 - x0, hh);
			if (l.open.has(i)) {
				ctx.strokeStyle = '#1d232b';
				ctx.setLineDash([3, 2]);
				ctx.strokeRect(x0 + 0.5, yy + 0.5, x1 - x0 - 1, hh - 1);
				ctx.setLineDash([]);
			}
			if (x1 - x0 > 40 && l.kind !== 'offcpu') {
				ctx.save();
				ctx.beginPath();
				ctx.rect(x0, yy, x1 - x0, hh);
				ctx.clip();
				ctx.fillStyle = '#fff';
				ctx.font = '11px system-ui, sans-serif';
				ctx.fillText(label(l, i), x0 + 3, yy + hh - 4);
				ctx.restore();
			}
		}
		void nsPerPx;
	}

	// the steady states of analyze's scopes, on the timeline's clock
	function steadySpans() {
		const A = D.analyze, origin = TL.origin || 0;
		return ((A && A.scopes) || []).filter(sc => sc.kind === 'steady' && sc.phases)
			.map(sc => ({ start: sc.phases.steady_start_ns - origin, end: sc.phases.steady_end_ns - origin, pid: sc.pid }));
	}

	function label(l, i) {
		const name = l.name[i] >= 0 ? STR[l.name[i]] : 'off-CPU';
		if (l.kind === 'calls' && (TL.call_types || {})[l.name[i]] === 'launch' && l.aux[i] > 0)
			return STR[l.aux[i] - 1];
		return name;
	}

	function drawCaptureRow(r) {
		const y = r.y + 2, h = r.h - 4;
		// each process' steady state (analyze's phases) under the ranges
		ctx.fillStyle = 'rgba(60,157,93,0.30)';
		for (const s of steadySpans()) {
			const x0 = Math.max(LABEL_W, X(s.start)), x1 = Math.min(W, X(s.end));
			if (x1 < LABEL_W || x0 > W) continue;
			ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
		}
		for (const c of D.captures || []) {
			const x0 = Math.max(LABEL_W, X(c.start)), x1 = Math.min(W, X(c.end));
			if (x1 < LABEL_W || x0 > W) continue;
			ctx.fillStyle = c.kind === 'window' ? 'rgba(47,111,179,0.35)' : 'rgba(199,163,59,0.55)';
			ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
		}
		ctx.fillStyle = '#d9534f';
		for (const t of TL.triggers || []) {
			const x = X(t.t);
			if (x < LABEL_W || x > W) continue;
			ctx.beginPath();
			ctx.moveTo(x, y); ctx.lineTo(x + 5, y + h); ctx.lineTo(x - 5, y + h);
			ctx.fill();
		}
	}

	// A GPU metric as a step area, scaled to its maximum (100 for a percentage).
	function drawCounter(r) {
		const l = r.lane, y = r.y + 2, h = r.h - 4;
		if (!l.n || !l.max) return;
		ctx.fillStyle = 'rgba(123,104,186,0.55)';
		let i = 0, lo = 0, hi = l.n;
		while (lo < hi) { const m = (lo + hi) >> 1; if (l.start[m] < view.v0) lo = m + 1; else hi = m; }
		i = Math.max(0, lo - 1);
		for (; i < l.n && l.start[i] <= view.v1; i++) {
			const x0 = Math.max(LABEL_W, X(l.start[i])), x1 = Math.min(W, X(i + 1 < l.n ? l.start[i + 1] : T_END));
			const hh = Math.max(1, l.value[i] / l.max * h);
			if (x1 > x0) ctx.fillRect(x0, y + h - hh, Math.max(1, x1 - x0), hh);
		}
	}

	function rowOfLane(idx) {
		return rows.find(r => r.type === 'lane' && r.lane.idx === idx);
	}

	// The arrows between a call and the GPU work it caused.
	function arrowsOf(sel) {
		if (!sel) return [];
		const l = lanes[sel.lane], out = [];
		if (l.kind === 'gpu' && l.link[sel.i] >= 0)
			out.push([l.link[sel.i], l.start[sel.i] - l.linkGap[sel.i], l.idx, l.start[sel.i]]);
		if (l.kind === 'calls')
			for (const [g, j] of byLaunch.get(l.idx + ':' + l.start[sel.i]) || [])
				out.push([l.idx, l.start[sel.i], g, lanes[g].start[j]]);
		return out;
	}

	function drawArrow(a) {
		const rf = rowOfLane(a[0]), rt = rowOfLane(a[2]);
		if (!rf || !rt) return;
		const x0 = X(a[1]), y0 = rf.y + rf.h / 2, x1 = X(a[3]), y1 = rt.y + rt.h / 2;
		ctx.strokeStyle = '#1d232b';
		ctx.fillStyle = '#1d232b';
		ctx.lineWidth = 1.5;
		ctx.beginPath();
		ctx.moveTo(x0, y0);
		ctx.bezierCurveTo(x0, (y0 + y1) / 2, x1, (y0 + y1) / 2, x1, y1);
		ctx.stroke();
		const dir = y1 > y0 ? 1 : -1;
		ctx.beginPath();
		ctx.moveTo(x1, y1); ctx.lineTo(x1 - 4, y1 - 7 * dir); ctx.lineTo(x1 + 4, y1 - 7 * dir);
		ctx.fill();
		ctx.lineWidth = 1;
	}

	function outline(sel, color) {
		if (!sel) return;
		const l = lanes[sel.lane], r = rowOfLane(sel.lane);
		if (!r) return;
		const x0 = Math.max(LABEL_W, X(l.start[sel.i])), x1 = Math.min(W, X(l.start[sel.i] + l.dur[sel.i]));
		let y = r.y + 1, h = r.h - 2;
		if (l.kind === 'nvtx') { y = r.y + 1 + l.aux[sel.i] * 14; h = 14; }
		ctx.strokeStyle = color;
		ctx.lineWidth = 2;
		ctx.strokeRect(x0 - 1, y, Math.max(2, x1 - x0) + 2, h);
		ctx.lineWidth = 1;
	}

	function draw() {
		const dpr = window.devicePixelRatio || 1;
		W = Math.max(400, scroll.clientWidth);
		H = buildRows() + 4;
		canvas.width = Math.round(W * dpr);
		canvas.height = Math.round(H * dpr);
		canvas.style.height = H + 'px';
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.fillStyle = '#ffffff';
		ctx.fillRect(0, 0, W, H);
		// axis
		const step = niceStep(view.v1 - view.v0, W - LABEL_W);
		ctx.font = '11px system-ui, sans-serif';
		ctx.fillStyle = '#5b6673';
		ctx.strokeStyle = '#e6eaee';
		axis = axisTicks(view.v0, view.v1, step);
		for (const k of axis) {
			const x = Math.round(X(k.t)) + 0.5;
			ctx.beginPath(); ctx.moveTo(x, AXIS_H - 6); ctx.lineTo(x, H); ctx.stroke();
			ctx.fillText(k.label, x + 3, AXIS_H - 9);
		}
		for (const r of rows) {
			if (r.type === 'head') {
				ctx.fillStyle = '#eef1f4';
				ctx.fillRect(0, r.y, W, r.h);
				ctx.fillStyle = '#1d232b';
				ctx.font = '600 12px system-ui, sans-serif';
				ctx.fillText((collapsed.has(r.key) !== !!r.fold ? '▸ ' : '▾ ') + r.label, 6, r.y + 14);
				continue;
			}
			ctx.fillStyle = '#5b6673';
			ctx.font = '11px system-ui, sans-serif';
			ctx.save();
			ctx.beginPath(); ctx.rect(0, r.y, LABEL_W - 6, r.h); ctx.clip();
			ctx.fillText(r.label, 14, r.y + 13);
			ctx.restore();
			ctx.strokeStyle = '#f0f2f4';
			ctx.beginPath(); ctx.moveTo(LABEL_W, r.y + r.h - 0.5); ctx.lineTo(W, r.y + r.h - 0.5); ctx.stroke();
			if (r.type === 'capture') drawCaptureRow(r);
			else if (r.type === 'counter') drawCounter(r);
			else drawLane(r);
		}
		ctx.strokeStyle = '#d5dbe1';
		ctx.beginPath(); ctx.moveTo(LABEL_W - 0.5, 0); ctx.lineTo(LABEL_W - 0.5, H); ctx.stroke();
		outline(selected, '#1d232b');
		outline(hover, '#2f6fb3');
		for (const a of arrowsOf(selected).concat(arrowsOf(hover))) drawArrow(a);
		const range = document.getElementById('tl-range');
		range.textContent = 'showing ' + dur(view.v0) + ' – ' + dur(view.v1) + ' (' + dur(view.v1 - view.v0) + ' of ' + dur(T_END) + ')';
		canvas.dataset.v0 = String(view.v0);
		canvas.dataset.v1 = String(view.v1);
	}
	let pending = false;
	function redraw() {
		if (pending) return;
		pending = true;
		requestAnimationFrame(() => { pending = false; draw(); });
	}

	function setView(v0, v1) {
		const minSpan = 100;
		if (v1 - v0 < minSpan) { const m = (v0 + v1) / 2; v0 = m - minSpan / 2; v1 = m + minSpan / 2; }
		const span = Math.min(v1 - v0, T_END * 1.2);
		v0 = Math.max(-T_END * 0.1, Math.min(v0, T_END * 1.1 - span));
		view.v0 = v0; view.v1 = v0 + span;
		redraw();
	}
	function zoom(f, at) {
		const t = at === undefined ? (view.v0 + view.v1) / 2 : at;
		setView(t - (t - view.v0) * f, t + (view.v1 - t) * f);
	}
	window.gtJump = function (t0, t1) {
		const pad = Math.max((t1 - t0) * 0.5, 2000);
		setView(t0 - pad, t1 + pad);
		document.getElementById('timeline').scrollIntoView();
	};

	// The event under (x, y): the shortest one covering the point, else
	// the nearest within 3 pixels.
	function hit(x, y) {
		const r = rows.find(rr => y >= rr.y && y < rr.y + rr.h);
		if (!r || x < LABEL_W) return { row: r };
		if (r.type === 'counter') return { row: r, counter: counterAt(r.lane, T(x)) };
		if (r.type !== 'lane') return { row: r };
		const l = r.lane, t = T(x), slack = 3 * (view.v1 - view.v0) / (W - LABEL_W);
		let best = -1, bestD = Infinity;
		for (let i = firstAt(l, t - slack); i < l.n && l.start[i] <= t + slack; i++) {
			if (l.kind === 'nvtx' && Math.floor((y - r.y - 2) / 14) !== l.aux[i]) continue;
			const s = l.start[i], e = s + l.dur[i];
			const d = t < s ? s - t : t > e ? t - e : -1 / (1 + l.dur[i]);
			if (d <= slack && d < bestD) { bestD = d; best = i; }
		}
		return { row: r, sel: best >= 0 ? { lane: l.idx, i: best } : null };
	}

	function counterAt(l, t) {
		let lo = 0, hi = l.n;
		while (lo < hi) { const m = (lo + hi) >> 1; if (l.start[m] <= t) lo = m + 1; else hi = m; }
		return lo > 0 ? 'GPU ' + l.device + ' ' + l.metric + ': ' + +l.value[lo - 1].toPrecision(4) + ' ' + l.unit + ' at ' + dur(l.start[lo - 1]) : null;
	}

	function describe(sel) {
		const l = lanes[sel.lane], i = sel.i, lines = [];
		const where = l.kind === 'gpu' ? 'GPU ' + l.device + ', stream ' + l.stream + ', pid ' + l.pid
			: (thrName.get(l.tid) || 'thread') + ' ' + l.tid + ', pid ' + l.pid;
		lines.push(label(l, i) + (l.kind === 'calls' && label(l, i) !== STR[l.name[i]] ? '  (' + STR[l.name[i]] + ')' : ''));
		lines.push('at ' + dur(l.start[i]) + ' for ' + (l.open.has(i) ? 'the rest of the trace (no exit recorded)'
			: l.kind === 'calls' && l.dur[i] === 0 ? 'an unknown time (recorded at entry only)' : dur(l.dur[i])) + ' — ' + where);
		if (l.kind === 'offcpu')
			lines.push({ 0: 'preempted (runnable)', 1: 'sleeping (S)', 2: 'uninterruptible (D)' }[l.aux[i]] || 'state ' + l.aux[i]);
		if ((l.kind === 'gpu' || l.kind === 'calls') && l.aux[i] > 0 && !(l.kind === 'calls' && (TL.call_types || {})[l.name[i]] === 'launch'))
			lines.push(bytes(l.aux[i]));
		if (l.kind === 'gpu') {
			if (l.link[i] >= 0) {
				const c = lanes[l.link[i]];
				lines.push('launched by the call at ' + dur(l.start[i] - l.linkGap[i]) + ' on thread ' + c.tid +
					' (' + dur(l.linkGap[i]) + ' from the call to the GPU start' + (l.causality[i] ? ': before its call, a clock or link anomaly' : '') + ')');
			} else {
				lines.push('not linked to a call');
			}
		}
		if (l.kind === 'calls') {
			const g = byLaunch.get(l.idx + ':' + l.start[i]) || [];
			if (g.length)
				lines.push(g.length + ' GPU record' + (g.length > 1 ? 's' : '') + ': ' + g.slice(0, 4).map(([li, j]) =>
					label(lanes[li], j) + ' at ' + dur(lanes[li].start[j]) + ' for ' + dur(lanes[li].dur[j])).join('; '));
		}
		return lines.join('\n');
	}

	let drag = null;
	canvas.addEventListener('mousedown', e => {
		drag = { x: e.offsetX, v0: view.v0, v1: view.v1, moved: false };
		canvas.style.cursor = 'grabbing';
	});
	window.addEventListener('mouseup', e => {
		if (!drag) return;
		const d = drag;
		drag = null;
		canvas.style.cursor = 'grab';
		if (d.moved || e.target !== canvas) return;
		const h = hit(e.offsetX, e.offsetY);
		if (h.row && h.row.type === 'head' && e.offsetX < LABEL_W) {
			if (collapsed.has(h.row.key)) collapsed.delete(h.row.key); else collapsed.add(h.row.key);
		} else {
			selected = h.sel || null;
			detail.textContent = selected ? describe(selected) : 'Click an event for its details.';
		}
		redraw();
	});
	canvas.addEventListener('mousemove', e => {
		if (drag) {
			const dx = e.offsetX - drag.x;
			if (Math.abs(dx) > 2) drag.moved = true;
			const ns = dx / (W - LABEL_W) * (drag.v1 - drag.v0);
			setView(drag.v0 - ns, drag.v1 - ns);
			return;
		}
		const h = hit(e.offsetX, e.offsetY);
		const before = hover;
		hover = h.sel || null;
		if (hover || h.counter) {
			tip.hidden = false;
			tip.textContent = hover ? describe(hover) : h.counter;
			tip.style.left = Math.min(e.offsetX + 12, W - 360) + 'px';
			tip.style.top = (e.offsetY + 14) + 'px';
		} else {
			tip.hidden = true;
		}
		if (before !== hover) redraw();
	});
	canvas.addEventListener('mouseleave', () => { tip.hidden = true; hover = null; redraw(); });
	canvas.addEventListener('wheel', e => {
		e.preventDefault();
		zoom(Math.exp(e.deltaY * 0.0015), T(e.offsetX));
	}, { passive: false });
	canvas.addEventListener('dblclick', () => setView(0, T_END));
	document.getElementById('tl-zoom-in').addEventListener('click', () => zoom(0.5));
	document.getElementById('tl-zoom-out').addEventListener('click', () => zoom(2));
	document.getElementById('tl-reset').addEventListener('click', () => setView(0, T_END));
	window.addEventListener('resize', redraw);

	// For the console and the tests: the view, and where to click to select
	// a kernel linked to its launch (the timeline is moved to show it).
	window.gtReport = {
		view: () => ({ v0: view.v0, v1: view.v1 }),
		arrows: () => arrowsOf(selected),
		linkedKernelSpot() {
			for (const l of lanes) {
				if (l.kind !== 'gpu') continue;
				for (let i = 0; i < l.n; i++) {
					if (l.link[i] < 0 || !l.dur[i]) continue;
					const t0 = Math.min(l.start[i] - l.linkGap[i], l.start[i]), t1 = l.start[i] + l.dur[i];
					view.v0 = t0 - (t1 - t0) * 0.5;
					view.v1 = t1 + (t1 - t0) * 0.5;
					draw();
					const r = rowOfLane(l.idx);
					scroll.scrollTop = Math.max(0, r.y - 60);
					const box = canvas.getBoundingClientRect();
					return { x: box.left + (X(l.start[i]) + X(t1)) / 2, y: box.top + r.y + r.h / 2 };
				}
			}
			return null;
		},
		// the rows' labels, as drawn now
		rowLabels: () => rows.map(r => r.label),
		// the rows as drawn: label, kind, top and height in the canvas
		rowBoxes: () => rows.map(r => ({ label: r.label, type: r.type, y: r.y, h: r.h })),
		// the axis' labels of the view [v0, v1] (the view set, drawn)
		axisAt(v0, v1) {
			view.v0 = v0;
			view.v1 = v1;
			draw();
			return axis.map(k => k.label);
		},
		// where a click opens the first folded row of threads without CUDA
		// calls (prefix 'm': of a GPU's metrics; scrolled into sight), null
		// when there is none
		foldSpot(prefix = 'i') {
			const r = rows.find(x => x.type === 'head' && x.fold && x.key.startsWith(prefix));
			if (!r) return null;
			scroll.scrollTop = Math.max(0, r.y - 60);
			draw();
			const box = canvas.getBoundingClientRect();
			return { x: box.left + 20, y: box.top + r.y + r.h / 2 };
		},
	};

	const jump = (t0, t1, text) => el('a', { href: '#timeline', 'data-t0': t0, 'data-t1': t1,
		onclick: ev => { ev.preventDefault(); window.gtJump(t0, t1); } }, text);

	// ---- sections -----------------------------------------------------

	section('top', () => {
		const t = D.trace, f = document.getElementById('trace-facts');
		document.title = 'gtrace-bpf report: ' + D.file;
		const fact = (k, v) => f.append(el('span', {}, k + ' ', el('b', {}, v)));
		fact('trace', D.file);
		if (t.host) fact('host', t.host);
		if (t.kernel) fact('kernel', t.kernel);
		fact('length', dur(t.duration_ns));
		fact('records', int(t.records));
		fact('processes', int((REPORTS.process_sum || []).length));
		fact('GPU records', t.gpu_records ? int(t.gpu_records) : 'none');
		if (t.cmdline) fact('recorded with', t.cmdline);
		const b = document.getElementById('banners');
		const banner = (text, bad) => b.append(el('div', { class: 'banner' + (bad ? ' bad' : ''), 'data-banner': bad ? 'bad' : 'warn' }, text));
		if (t.truncated)
			banner('This trace is cut short (' + t.damage + '): the report covers the records before that point.', true);
		if (!t.calls)
			banner('This trace holds no CUDA calls: nothing called libcuda while it was recorded (was the program started under the recorder, and does it use the GPU?). The sections below say what is missing.', true);
		if (t.calls && !t.gpu_records)
			banner('No GPU-side records: kernel times, GPU utilization and launch→kernel arrows need a recording with --cupti (then gtrace-bpf merge). The CPU side is all here.');
		for (const w of t.warnings || []) banner(w);
		if (D.stats && D.stats.sampled) banner(D.stats.sampled_note);
		// a comparison asked for is what the reader came for: first, also
		// when it could not be made (why is the first thing to read)
		if (D.diff || D.diff_missing) {
			const sec = document.getElementById('compare'), main = sec.parentNode;
			main.insertBefore(sec, main.firstElementChild);
		}
		const toc = document.getElementById('toc');
		for (const s of document.querySelectorAll('main > section'))
			toc.append(el('a', { href: '#' + s.id }, s.querySelector('h2').textContent));
	});

	// analyze's scopes: per process (and capture range), its three answers
	// and its findings, whose examples open the timeline where they are.
	section('answers', () => {
		const b = body('answers'), A = D.analyze;
		if (!A) { b.append(missing(D.analyze_missing || 'No answers for this trace.')); return; }
		const origin = TL.origin;
		const Q = [['busy', 'Busy or waiting?'], ['bound', 'What bounds it?'], ['parallelism', 'Parallelism and serial dependencies']];
		for (const n of A.notes || []) b.append(el('div', { class: 'note' }, n));
		const steadyPids = new Set((A.scopes || []).filter(sc => sc.kind === 'steady').map(sc => sc.pid));
		for (const sc of A.scopes || []) {
			// a process' steady state first (analyze's order), its whole run after
			const what = sc.kind === 'steady' ? 'steady state of ' :
				sc.kind === 'process' ? (steadyPids.has(sc.pid) ? 'whole run of ' : '') : sc.kind + ' ' + sc.number + ' of ';
			const title = what + (sc.name || 'process') + ' (pid ' + sc.pid + '), ' + dur(sc.wall_ns) + (sc.sampled ? ', sampled (light mode)' : '');
			const h = el('h3', { 'data-scope': sc.kind + ':' + sc.pid + ':' + sc.number },
				jump(sc.start_ns - origin, sc.end_ns - origin, title));
			b.append(h);
			const ph = sc.phases;
			if (ph) {
				const it = ph.source === 'gpu_span' ? 'no iterations found: the GPU\'s active span' :
					ph.source === 'calls_span' ? 'no iterations found: the span of its CUDA calls' :
					ph.iterations + ' of the ' + ph.iterations_found + ' iterations found (' + ph.source + ': ' + (ph.what || '?') +
					'), median ' + dur(ph.median_iteration_ns) + (ph.steady ? '' : '; no steady state: the times do not settle');
				b.append(el('div', { class: 'note', 'data-phases': sc.pid }, it + '. Start-up: ' + dur(ph.startup_ns) +
					(ph.startup_iterations ? ' (' + ph.startup_iterations + ' iterations of warm-up)' : '') +
					(ph.tail_iterations ? '; tail: ' + ph.tail_iterations + ' iterations' : '') + '.'));
			}
			for (const [k, q] of Q)
				if (sc.answers && sc.answers[k])
					b.append(el('div', { class: 'answer', 'data-answer': k, 'data-pid': sc.pid },
						el('div', { class: 'q' }, q), sc.answers[k]));
			const g = sc.gpu || {};
			if (g.source === 'gpu_records' && g.wall_ns) {
				// the wall time split: busy, then each kind of idle time
				const parts = [['busy', g.busy_ns, '#4f86c6']].concat(Object.entries(g.idle_ns || {}).map(([k, v]) =>
					['idle: ' + k, v, { submit: '#d9534f', launch: '#e5b84b', sync: '#b0413e', other: '#9aa5b1', before: '#d5dbe1', after: '#d5dbe1' }[k] || '#ccc']));
				const ns = 'http://www.w3.org/2000/svg', svg = document.createElementNS(ns, 'svg');
				const total = parts.reduce((s, p) => s + p[1], 0) || 1;
				svg.setAttribute('width', '600'); svg.setAttribute('height', '16');
				let x = 0;
				const leg = el('div', { class: 'legend' });
				for (const [name, v, color] of parts) {
					if (!v) continue;
					const r = document.createElementNS(ns, 'rect'), w = v / total * 600;
					r.setAttribute('x', String(x)); r.setAttribute('width', String(Math.max(w, 0.5)));
					r.setAttribute('height', '16'); r.setAttribute('fill', color);
					const t = document.createElementNS(ns, 'title');
					t.textContent = name + ': ' + dur(v);
					r.append(t); svg.append(r); x += w;
					leg.append(el('span', {}, el('i', { style: 'background:' + color }), name + ' ' + dur(v)));
				}
				b.append(el('div', { class: 'note' }, 'GPU time of the wall time (summed over ' + g.devices + ' device' + (g.devices > 1 ? 's' : '') + '):'), svg, leg);
			}
			if (!(sc.findings || []).length)
				b.append(el('div', { class: 'note' }, 'No findings: none of the rules matched.'));
			for (const fd of sc.findings || []) {
				const div = el('div', { class: 'finding sev-' + fd.severity, 'data-finding': fd.id, 'data-pid': sc.pid },
					el('span', { class: 'id' }, fd.id), ' ', el('b', {}, fd.severity), ' — ',
					(fd.cost_upper ? 'up to ' : '') + dur(fd.cost_ns) + ': ', fd.summary || '');
				if (fd.fix) div.append(el('div', { class: 'note' }, 'Fix: ' + fd.fix));
				const ex = fd.examples || [];
				if (ex.length) {
					const p = el('div', { class: 'note' }, 'See on the timeline: ');
					ex.forEach((x, i) => {
						if (i) p.append(', ');
						// "at 309 ms: 12.1 ms GPU idle": when, then how long and what
						p.append(jump(x.ts - origin, x.ts - origin + x.dur,
							'at ' + dur(x.ts - origin) + ': ' + (x.dur ? dur(x.dur) + ' ' : '') +
							(x.what || '') + (x.tid ? ' (thread ' + x.tid + ')' : '')));
					});
					div.append(p);
				}
				b.append(div);
			}
		}
	});

	section('timeline', () => {
		const note = document.getElementById('tl-note');
		if (!lanes.length) {
			note.textContent = 'Nothing to draw: the trace has no calls, GPU records, off-CPU intervals nor NVTX ranges.';
		} else if (TL.kept < TL.events) {
			note.textContent = 'Showing ' + int(TL.kept) + ' of ' + int(TL.events) + ' events exactly (those of ' +
				dur(TL.min_kept_ns) + ' or more); the other ' + int(TL.events - TL.kept) +
				' are drawn grey, as the share of each lane\'s time they cover (bins of ' + dur(TL.bin_ns) +
				'). `gtrace-bpf export -f perfetto` has every event.';
		} else {
			note.textContent = 'Every one of the ' + int(TL.events) + ' events is drawn. Wheel to zoom, drag to pan, click for details.';
		}
		// the threads of each process that made no CUDA call, folded
		const withCalls = new Set(lanes.filter(l => l.kind === 'calls').map(l => l.pid + ':' + l.tid));
		const idle = new Set(lanes.filter(l => onCpu(l) && !withCalls.has(l.pid + ':' + l.tid)).map(l => l.pid + ':' + l.tid));
		if (idle.size)
			note.textContent += ' ' + int(idle.size) + ' thread' + (idle.size === 1 ? '' : 's') +
				' without CUDA calls folded into one row per process (click it to show them).';
		const counters = lanes.filter(l => l.kind === 'counter');
		const devs = [...new Set(counters.map(l => l.device))];
		const folded = devs.reduce((n, d) => { const c = counters.filter(l => l.device === d); return n + c.length - keyMetrics(c).length; }, 0);
		if (folded)
			note.textContent += ' Each GPU shows its SM, tensor, DRAM, PCIe and NVLink metrics; ' + int(folded) +
				' other metric lane' + (folded === 1 ? '' : 's') + ' are folded (click the row to show them).';
		if (steadySpans().length)
			note.textContent += ' The green band above the threads is each process\' steady state.';
		const leg = document.getElementById('tl-legend');
		const item = (c, t) => leg.append(el('span', {}, el('i', { style: 'background:' + c }), t));
		for (const [k, c] of Object.entries({ launch: CALL_COLORS.launch, 'copy call': CALL_COLORS.memcpy, 'set call': CALL_COLORS.memset,
			'sync wait': CALL_COLORS.sync, 'alloc/free': CALL_COLORS.alloc, event: CALL_COLORS.event }))
			item(c, k);
		item(OFF_COLORS[1], 'off-CPU sleeping'); item(OFF_COLORS[0], 'off-CPU preempted'); item(OFF_COLORS[2], 'off-CPU uninterruptible');
		item('hsl(210,60%,52%)', 'kernels (a colour per name)'); item('#3c9d5d', 'GPU copy');
		if (lanes.some(l => l.kind === 'counter')) item('rgba(123,104,186,0.55)', 'GPU metric (of its maximum)');
		item('rgba(199,163,59,0.55)', 'capture range'); item('rgba(47,111,179,0.35)', 'light-mode window');
		if (steadySpans().length) item('rgba(60,157,93,0.30)', 'steady state');
		if (TL.kept < TL.events) item('rgba(120,140,160,0.45)', 'events left out: share of time');
		draw();
	});

	// uPlot with the page's defaults: width of the section.
	function plot(target, opts, data) {
		const w = Math.max(320, Math.min(target.clientWidth || 900, 1300));
		return new uPlot(Object.assign({ width: w, height: 220 }, opts), data, target);
	}

	section('gpu-util', () => {
		const b = body('gpu-util'), all = REPORTS.gpu_metrics_sum || [];
		// the whole run's rows; the other scopes (ranges, windows, kernels by
		// sole occupancy, processes) in a table of their own
		const gm = all.filter(r => r.scope === 'run'), scoped = all.filter(r => r.scope !== 'run');
		if (gm.length) {
			b.append(el('h3', {}, 'GPU metrics (gpu_metrics_sum, sampled with --gpu-metrics)'));
			b.append(table([
				{ title: 'GPU', get: r => r.gpu },
				{ title: 'Metric', cls: 'text', get: r => r.metric },
				{ title: 'Unit', cls: 'text', get: r => r.unit },
				{ title: 'Samples', get: r => int(r.samples) },
				{ title: 'Mean', get: r => r.mean },
				{ title: 'P50', get: r => r.p50 },
				{ title: 'P95', get: r => r.p95 },
				{ title: 'Max', get: r => r.max },
			], gm, r => ({ 'data-metric': r.metric, 'data-gpu': r.gpu, 'data-samples': r.samples })));
			b.append(el('div', { class: 'note' }, 'Each metric is also a counter lane under its GPU on the timeline (NVML index).'));
		}
		if (scoped.length) {
			b.append(el('h3', {}, 'GPU metrics by scope: capture ranges and windows (by time), kernels that were at least 95 % of their GPU\u2019s work (sole occupancy), processes\u2019 memory'));
			b.append(table([
				{ title: 'GPU', get: r => r.gpu },
				{ title: 'Scope', cls: 'text', get: r => r.scope },
				{ title: 'Of', cls: 'text', get: r => r.of },
				{ title: 'Metric', cls: 'text', get: r => r.metric },
				{ title: 'Unit', cls: 'text', get: r => r.unit },
				{ title: 'Samples', get: r => int(r.samples) },
				{ title: 'Mean', get: r => r.mean },
				{ title: 'P50', get: r => r.p50 },
				{ title: 'P95', get: r => r.p95 },
				{ title: 'Max', get: r => r.max },
				{ title: 'Attribution', cls: 'text', get: r => r.attribution },
			], scoped, r => ({ 'data-gpum-scope': r.scope, 'data-gpu': r.gpu, 'data-metric-of': r.metric })));
		}
		if (!(TL.util || []).length) {
			b.append(missing(D.trace.gpu_records ? 'The GPU records hold no kernels.' :
				'No GPU records in this trace: record with --cupti (and merge) for GPU utilization.'));
			return;
		}
		const nb = Math.max(1, Math.ceil(T_END / TL.bin_ns)), bw = TL.bin_ns;
		// at most ~600 points a device: bins summed in groups
		const g = Math.max(1, Math.ceil(nb / 600)), npt = Math.ceil(nb / g);
		const xs = new Float64Array(npt);
		for (let i = 0; i < npt; i++) xs[i] = (i * g + g / 2) * bw / 1e9;
		const data = [xs], series = [{ label: 'time (s)' }];
		b.append(el('div', { class: 'note' }, 'Share of each interval of ' + dur(g * bw) +
			' in which at least one kernel ran on the device (any stream), from every GPU kernel record. Select a span to show it on the timeline.'));
		for (const u of TL.util) {
			const ys = new Float64Array(npt);
			for (let i = 0; i + 1 < u.busy.length; i += 2) ys[Math.floor(u.busy[i] / g)] += u.busy[i + 1];
			for (let i = 0; i < npt; i++) ys[i] = Math.min(100, ys[i] / (g * bw) * 100);
			let busy = 0;
			for (let i = 0; i + 1 < u.busy.length; i += 2) busy += u.busy[i + 1];
			data.push(ys);
			series.push({ label: 'GPU ' + u.device + ' (' + pct(busy / T_END * 100) + ' overall)', stroke: hashColor('gpu' + u.device, 60, 45),
				fill: 'rgba(79,134,198,0.15)', width: 1, value: (s, v) => v === null ? '-' : v.toFixed(1) + ' %' });
			b.dataset['busyDevice' + u.device] = String(busy);
		}
		const div = el('div', { class: 'chart', id: 'util-chart' });
		b.append(div);
		plot(div, {
			series, scales: { x: { time: false }, y: { range: [0, 100] } },
			axes: [{ label: 'seconds since the recording started' }, { label: '% busy' }],
			cursor: { drag: { x: true, setScale: false } },
			hooks: { setSelect: [u => {
				if (u.select.width < 2) return;
				window.gtJump(u.posToVal(u.select.left, 'x') * 1e9, u.posToVal(u.select.left + u.select.width, 'x') * 1e9);
			}] },
		}, data);
	});

	function kernelsByTime(b) {
		const rows = REPORTS.cuda_gpu_kern_sum || [];
		b.append(el('h3', {}, 'By GPU time (cuda_gpu_kern_sum)'));
		if (!rows.length) {
			b.append(missing('No GPU kernel records: the time kernels ran on the GPU needs a recording with --cupti (and merge).'));
			return;
		}
		const top = rows.slice(0, 25), max = top[0].total_time || 1;
		b.append(table([
			{ title: '#', get: r => rows.indexOf(r) + 1 },
			{ title: 'GPU time', get: r => dur(r.total_time) },
			{ title: '', get: r => bar(r.total_time / max, '#4f86c6') },
			{ title: 'Time (%)', get: r => pct(r.time_pct) },
			{ title: 'Instances', get: r => int(r.instances) },
			{ title: 'Avg', get: r => dur(r.avg) },
			{ title: 'Med', get: r => dur(r.med) },
			{ title: 'Max', get: r => dur(r.max) },
			{ title: 'Kernel', cls: 'name', get: r => r.name },
		], top, r => ({ 'data-kernel': r.name, 'data-instances': r.instances, 'data-total-time': r.total_time, class: 'kern-time' })));
		if (rows.length > top.length)
			b.append(el('div', { class: 'note' }, rows.length - top.length + ' more kernels: gtrace-bpf stats -r cuda_gpu_kern_sum lists all.'));
	}

	function kernelsByCount(b) {
		const rows = REPORTS.cuda_launch_sum || [];
		b.append(el('h3', {}, 'By launches (cuda_launch_sum)'));
		if (!rows.length) { b.append(missing('No kernel launches in this trace.')); return; }
		const top = rows.slice(0, 25), max = top[0].launches || 1;
		b.append(table([
			{ title: '#', get: r => rows.indexOf(r) + 1 },
			{ title: 'Launches', get: r => int(r.launches) },
			{ title: '', get: r => bar(r.launches / max, '#5bb5a2') },
			{ title: 'Launches (%)', get: r => pct(r.launches_pct) },
			{ title: 'Shapes', get: r => int(r.shapes) },
			{ title: 'Grid', get: r => r.grid || '-' },
			{ title: 'Block', get: r => r.block || '-' },
			{ title: 'Kernel', cls: 'name', get: r => r.name },
		], top, r => ({ 'data-kernel': r.name, 'data-launches': r.launches, class: 'kern-count' })));
		if (rows.length > top.length)
			b.append(el('div', { class: 'note' }, rows.length - top.length + ' more kernels: gtrace-bpf stats -r cuda_launch_sum lists all.'));
	}

	// The ranks over time: one row per process with NCCL calls (a job's
	// ranks, a job trace's from every host), the share of each stretch of
	// the trace it spent in NCCL calls: a rank that others wait for shows
	// light where they show dark.
	section('ranks', () => {
		const b = body('ranks'), COLS = 160;
		const by = new Map();
		for (const l of lanes) {
			if (l.kind !== 'nccl') continue;
			if (!by.has(l.pid)) by.set(l.pid, { pid: l.pid, rank: l.rank, host: l.host || 0, busy: new Float64Array(COLS), calls: 0, time: 0 });
			const r = by.get(l.pid), bw = TL.bin_ns;
			r.calls += l.events;
			for (let i = 0; i < TL.bins; i++) {
				if (!l.busy[i]) continue;
				r.time += l.busy[i];
				r.busy[Math.min(COLS - 1, Math.floor(i * bw / T_END * COLS))] += l.busy[i];
			}
		}
		if (!by.size) { b.append(missing('No NCCL calls in this trace: no ranks to show.')); return; }
		const colW = T_END / COLS, W = 640, H = 14, ns = 'http://www.w3.org/2000/svg';
		const list = [...by.values()].sort((x, y) => (x.rank < 0) - (y.rank < 0) || x.rank - y.rank || x.host - y.host || x.pid - y.pid);
		const strip = r => {
			const svg = document.createElementNS(ns, 'svg');
			svg.setAttribute('width', String(W));
			svg.setAttribute('height', String(H));
			for (let c = 0; c < COLS; c++) {
				const share = Math.min(1, r.busy[c] / colW);
				if (!(share > 0)) continue;
				const rect = document.createElementNS(ns, 'rect');
				rect.setAttribute('x', String(c * W / COLS));
				rect.setAttribute('width', String(Math.max(1, W / COLS)));
				rect.setAttribute('height', String(H));
				rect.setAttribute('fill', 'rgba(176,64,64,' + (0.15 + 0.85 * share).toFixed(3) + ')');
				const tip = document.createElementNS(ns, 'title');
				tip.textContent = dur(c * colW) + ' – ' + dur((c + 1) * colW) + ': ' + (share * 100).toFixed(1) + ' % in NCCL calls';
				rect.append(tip);
				svg.append(rect);
			}
			return el('td', { class: 'bar' }, svg);
		};
		b.append(el('p', { class: 'note' }, 'Each row a process with NCCL calls, across the whole trace in ' + COLS +
			' stretches of ' + dur(colW) + ': the darker, the more of it spent in NCCL calls (waiting for the other ranks, then the transfer).'));
		b.append(table([
			{ title: 'Rank', get: r => r.rank >= 0 ? r.rank : '-' },
			{ title: 'Host', get: r => r.host },
			{ title: 'PID', get: r => r.pid & 0x3fffff },
			{ title: 'NCCL calls', get: r => int(r.calls) },
			{ title: 'In NCCL', get: r => dur(r.time) },
			{ title: 'Share of the trace in NCCL calls, over time', get: strip },
			{ title: 'Process', cls: 'name', get: r => procName.get(r.pid) || '-' },
		], list, r => ({ 'data-rank': r.rank, 'data-host': r.host, 'data-pid': r.pid, 'data-nccl-calls': r.calls,
			'data-nccl-ns': Math.round(r.time), 'data-cells': r.busy.filter(v => v > 0).length })));
	});

	section('kernels', () => {
		const b = body('kernels');
		kernelsByTime(b);
		kernelsByCount(b);
	});

	// A histogram of log2 buckets: [{label, counts: [[bucket, n], ...]}]
	// with uPlot, one series each (bars for one, steps for several, which
	// stay readable where they overlap); fmt names a bucket's lower edge.
	function histogram(target, groups, fmt, what) {
		let lo = Infinity, hi = -Infinity;
		for (const g of groups) for (const [k] of g.counts) { lo = Math.min(lo, k); hi = Math.max(hi, k); }
		if (lo === Infinity) return false;
		const xs = [];
		for (let k = lo; k <= hi; k++) xs.push(k);
		const edge = k => k === 0 ? '0' : fmt(Math.pow(2, k - 1)) + ' – ' + fmt(Math.pow(2, k));
		const data = [xs], series = [{ label: what, value: (u, v) => v === null ? '-' : edge(v) }];
		for (const g of groups) {
			const ys = xs.map(() => 0);
			for (const [k, n] of g.counts) ys[k - lo] += n;
			data.push(ys);
			series.push({ label: g.label, stroke: hashColor(g.label, 55, 42), width: 1.5,
				fill: groups.length === 1 ? hashColor(g.label, 55, 62) : undefined,
				paths: groups.length === 1 ? uPlot.paths.bars({ size: [0.85, 80] }) : uPlot.paths.stepped({ align: 0 }),
				points: { show: false } });
		}
		plot(target, {
			series, scales: { x: { time: false, range: [lo - 0.6, hi + 0.6] } },
			axes: [{ label: what + ' (each bucket twice the one before)', incrs: [1, 2, 4, 8],
				values: (u, ks) => ks.map(k => Number.isInteger(k) ? (k === 0 ? '0' : fmt(Math.pow(2, k - 1))) : '') },
			{ label: 'count' }],
		}, data);
		return true;
	}

	section('sync', () => {
		const b = body('sync'), rows = REPORTS.cuda_sync_sum || [];
		if (!rows.length) { b.append(missing('No synchronizing calls (synchronize, query, stream wait) in this trace.')); return; }
		const byApi = new Map();
		for (const h of (D.hist && D.hist.sync) || []) {
			if (!byApi.has(h.api)) byApi.set(h.api, new Map());
			const m = byApi.get(h.api);
			for (const [k, n] of h.counts) m.set(k, (m.get(k) || 0) + n);
		}
		const groups = [...byApi].map(([api, m]) => ({ label: api, counts: [...m] }));
		const div = el('div', { class: 'chart', id: 'sync-chart' });
		b.append(el('div', { class: 'note' }, 'How long the calls that wait for the GPU took (cuda_sync_sum\'s calls with an exit), in buckets that double.'));
		b.append(div);
		if (!histogram(div, groups, dur, 'duration'))
			div.append(missing('None of these calls has an exit: their durations are unknown.'));
		const total = rows.reduce((s, r) => s + (r.total_time || 0), 0) || 1;
		b.append(table([
			{ title: 'Total Time', get: r => dur(r.total_time) },
			{ title: '', get: r => bar((r.total_time || 0) / total, '#d9534f') },
			{ title: 'Calls', get: r => int(r.num_calls) },
			{ title: 'Avg', get: r => dur(r.avg) },
			{ title: 'Med', get: r => dur(r.med) },
			{ title: 'Max', get: r => dur(r.max) },
			{ title: 'Incomplete', get: r => int(r.incomplete) },
			{ title: 'PID', get: r => r.pid },
			{ title: 'Call', cls: 'name', get: r => r.name },
		], rows, r => ({ 'data-sync': r.name, 'data-pid': r.pid, 'data-calls': r.num_calls })));
	});

	section('copies', () => {
		const b = body('copies'), cpu = REPORTS.cuda_mem_size_sum || [], gt = REPORTS.cuda_gpu_mem_time_sum || [],
			gs = REPORTS.cuda_gpu_mem_size_sum || [];
		if (!cpu.length && !gs.length) { b.append(missing('No copies or sets in this trace.')); return; }
		const w = el('div', { class: 'row2' }), left = el('div'), right = el('div');
		w.append(left, right);
		b.append(w);
		left.append(el('h3', {}, 'By direction'));
		const max = Math.max(1, ...cpu.map(r => r.total || 0));
		if (cpu.length)
			left.append(table([
				{ title: 'Operation', cls: 'text', get: r => r.operation },
				{ title: 'Bytes', get: r => bytes(r.total) },
				{ title: '', get: r => bar((r.total || 0) / max, '#3c9d5d') },
				{ title: 'Count', get: r => int(r.count) },
				{ title: 'Med size', get: r => bytes(r.med) },
				{ title: 'Max size', get: r => bytes(r.max) },
			], cpu, r => ({ 'data-copy': r.operation, 'data-count': r.count, 'data-bytes': r.total })));
		else
			left.append(missing('No copy or set calls on the CPU side.'));
		if (gt.length) {
			left.append(el('h3', {}, 'On the GPU (cuda_gpu_mem_time_sum)'));
			const gmax = Math.max(1, ...gt.map(r => r.total_time || 0));
			const size = new Map(gs.map(r => [r.operation, r]));
			left.append(table([
				{ title: 'Operation', cls: 'text', get: r => r.operation },
				{ title: 'GPU time', get: r => dur(r.total_time) },
				{ title: '', get: r => bar((r.total_time || 0) / gmax, '#3c9d5d') },
				{ title: 'Count', get: r => int(r.count) },
				{ title: 'Bytes', get: r => bytes((size.get(r.operation) || {}).total) },
				{ title: 'Throughput', get: r => { const s = size.get(r.operation); return s && r.total_time ? bytes(s.total / (r.total_time / 1e9)) + '/s' : '-'; } },
			], gt, r => ({ 'data-gpu-copy': r.operation, 'data-count': r.count })));
		}
		right.append(el('h3', {}, 'By size'));
		const div = el('div', { class: 'chart', id: 'copy-chart' });
		right.append(div);
		const groups = ((D.hist && D.hist.copy) || []).map(h => ({ label: h.kind, counts: h.counts }));
		if (!histogram(div, groups, v => bytes(v), 'bytes'))
			div.append(missing('No sizes to show.'));
	});

	// the lines of the program (with --stacks): GPU time by the call site of
	// each kernel's launch, and the host's waits by the call site of each sync
	section('sites', () => {
		const b = body('sites'), gpu = REPORTS.cuda_gpu_site_sum || [], waits = REPORTS.cuda_sync_site_sum || [];
		if (!gpu.length && !waits.length) {
			b.append(missing('No call stacks in this trace: record with --stacks sync (waits) or --stacks all (launches too) to see the lines of the program here.'));
			return;
		}
		if (gpu.length) {
			const top = gpu.slice(0, 30), max = Math.max(1, ...top.map(r => r.total_time || 0));
			b.append(el('h3', {}, 'GPU time by launch site'));
			b.append(table([
				{ title: 'GPU Time', get: r => dur(r.total_time) },
				{ title: '', get: r => bar((r.total_time || 0) / max, '#4f86c6') },
				{ title: 'Time (%)', get: r => pct(r.time_pct) },
				{ title: 'Kernels', get: r => int(r.instances) },
				{ title: 'Avg', get: r => dur(r.avg) },
				{ title: 'Launch site', cls: 'name', get: r => r.site },
			], top, r => ({ 'data-site': r.site, 'data-site-kind': 'gpu', 'data-instances': r.instances, 'data-pct': r.time_pct })));
			if (gpu.length > top.length)
				b.append(el('div', { class: 'note' }, gpu.length - top.length + ' more: gtrace-bpf stats -r cuda_gpu_site_sum.'));
		}
		if (waits.length) {
			const top = waits.slice(0, 30), max = Math.max(1, ...top.map(r => r.total_time || 0));
			b.append(el('h3', {}, 'Host waits by call site'));
			b.append(table([
				{ title: 'Waited', get: r => dur(r.total_time) },
				{ title: '', get: r => bar((r.total_time || 0) / max, '#c0504d') },
				{ title: 'Time (%)', get: r => pct(r.time_pct) },
				{ title: 'Calls', get: r => int(r.num_calls) },
				{ title: 'Med', get: r => dur(r.med) },
				{ title: 'Call site', cls: 'name', get: r => r.site },
			], top, r => ({ 'data-site': r.site, 'data-site-kind': 'sync', 'data-calls': r.num_calls, 'data-pct': r.time_pct })));
			if (waits.length > top.length)
				b.append(el('div', { class: 'note' }, waits.length - top.length + ' more: gtrace-bpf stats -r cuda_sync_site_sum.'));
		}
	});

	// a flame graph (an icicle, the program's outermost frame on top) of
	// the GPU kernel time by the stack of the launch that made each kernel
	section('flame', () => {
		const b = body('flame'), F = D.flame || { stacks: [], total: 0 };
		if (!F.stacks.length) {
			b.append(missing('No launch stacks with GPU time in this trace: record with --cupti --stacks all to see which lines of the program the GPU time came from.'));
			return;
		}
		const root = { name: 'all', ns: 0, kids: new Map() };
		const add = (frames, ns) => {
			let n = root;
			root.ns += ns;
			for (const f of frames) {
				if (!n.kids.has(f)) n.kids.set(f, { name: f, ns: 0, kids: new Map() });
				n = n.kids.get(f);
				n.ns += ns;
			}
		};
		for (const s of F.stacks) add(s.frames, s.ns);
		if (F.more_ns) add(['(' + F.more + ' more stacks)'], F.more_ns);
		if (F.none_ns) add(['(launch without a stack)'], F.none_ns);
		const total = Math.max(root.ns, 1), ROW = 17, MAX_DEPTH = 60;
		const box = el('div', { class: 'flame' });
		let depth = 0;
		const draw = (n, x, d) => {
			if (d > MAX_DEPTH) return;
			depth = Math.max(depth, d);
			let at = x;
			for (const k of [...n.kids.values()].sort((p, q) => q.ns - p.ns)) {
				const w = k.ns / total;
				if (w < 0.002) { at += w; continue; }
				const share = (100 * k.ns / total).toFixed(1) + ' %';
				box.append(el('div', {
					class: 'flame-node', 'data-flame': k.name, 'data-flame-depth': d, 'data-ns': k.ns,
					title: k.name + ' \u2014 ' + dur(k.ns) + ' (' + share + ')',
					style: 'left:' + (100 * at) + '%;width:' + (100 * w) + '%;top:' + (d * ROW) + 'px;background:' + hashColor(k.name, 60, 72),
				}, k.name));
				draw(k, at, d + 1);
				at += w;
			}
		};
		draw(root, 0, 0);
		box.style.height = ((depth + 1) * ROW) + 'px';
		b.append(el('div', { class: 'note' }, dur(F.total) + ' of GPU kernel time; each box is a frame, as wide as the GPU time of the kernels launched under it; the outermost frame on top.'));
		b.append(box);
	});

	section('processes', () => {
		const b = body('processes'), rows = REPORTS.process_sum || [];
		if (!rows.length) { b.append(missing('No process records in this trace.')); return; }
		const lat = new Map((REPORTS.gpu_launch_latency || []).map(r => [r.pid, r]));
		b.append(table([
			{ title: 'PID', get: r => r.pid },
			{ title: 'Events', get: r => int(r.events) },
			{ title: 'Calls', get: r => int(r.calls) },
			{ title: 'API Time', get: r => dur(r.api_time) },
			{ title: 'Launches', get: r => int(r.launches) },
			{ title: 'Sync Time', get: r => dur(r.sync_time) },
			{ title: 'Launch → GPU start p50', get: r => lat.has(r.pid) ? dur(lat.get(r.pid).p50) : '-' },
			{ title: 'p99', get: r => lat.has(r.pid) ? dur(lat.get(r.pid).p99) : '-' },
			{ title: 'Command', cls: 'name', get: r => r.command || '-' },
		], rows, r => ({ 'data-pid': r.pid, 'data-calls': r.calls, 'data-launches': r.launches })));
	});

	section('api', () => {
		const b = body('api'), rows = REPORTS.cuda_api_sum || [];
		if (!rows.length) { b.append(missing('No CUDA API calls in this trace.')); return; }
		// the 30 that took most time, and every call without times (launches
		// recorded at entry only): the calls that matter most come last in
		// stats' order, and would fall off a table of its first rows
		const untimed = rows.filter(r => r.total_time === null || r.total_time === undefined);
		const top = rows.filter(r => !untimed.includes(r)).slice(0, 30).concat(untimed);
		const max = Math.max(1, ...top.map(r => r.total_time || 0));
		b.append(table([
			{ title: 'Total Time', get: r => untimed.includes(r) ? 'no exit recorded' : dur(r.total_time) },
			{ title: '', get: r => bar((r.total_time || 0) / max, '#8c8c8c') },
			{ title: 'Time (%)', get: r => pct(r.time_pct) },
			{ title: 'Calls', get: r => int(r.num_calls) },
			{ title: 'Avg', get: r => dur(r.avg) },
			{ title: 'Med', get: r => dur(r.med) },
			{ title: 'Max', get: r => dur(r.max) },
			{ title: 'Incomplete', get: r => int(r.incomplete) },
			{ title: 'Name', cls: 'name', get: r => r.name },
		], top, r => ({ 'data-api': r.name, 'data-calls': r.num_calls })));
		if (untimed.length)
			b.append(el('div', { class: 'note' }, 'Calls with no exit recorded count with no time: launches are recorded at entry only unless the recording used --launch-exit.'));
		if (rows.length > top.length)
			b.append(el('div', { class: 'note' }, rows.length - top.length + ' more: gtrace-bpf stats -r cuda_api_sum.'));
	});

	section('nvtx', () => {
		const b = body('nvtx'), rows = REPORTS.nvtx_sum || [];
		if (!rows.length) { b.append(missing('No NVTX ranges in this trace (they come with --cupti).')); return; }
		const top = rows.slice(0, 30), max = Math.max(1, ...top.map(r => r.total_time || 0));
		b.append(table([
			{ title: 'Total Time', get: r => dur(r.total_time) },
			{ title: '', get: r => bar((r.total_time || 0) / max, '#c7a33b') },
			{ title: 'Instances', get: r => int(r.instances) },
			{ title: 'Avg', get: r => dur(r.avg) },
			{ title: 'Med', get: r => dur(r.med) },
			{ title: 'Range', cls: 'name', get: r => r.range },
		], top, r => ({ 'data-nvtx': r.range, 'data-instances': r.instances })));
	});

	section('capture', () => {
		const b = body('capture'), caps = D.captures || [];
		if (!caps.length) { b.append(missing('No capture ranges or light-mode windows: the whole recording was captured.')); return; }
		b.append(table([
			{ title: 'Number', get: c => (c.kind === 'window' ? 'w' : '') + c.number },
			{ title: 'Kind', cls: 'text', get: c => c.kind },
			{ title: 'Source', cls: 'text', get: c => c.source },
			{ title: 'PID', get: c => c.pid || '-' },
			{ title: 'Start', get: c => jump(c.start, c.end, dur(c.start)) },
			{ title: 'Duration', get: c => dur(c.end - c.start) },
			{ title: 'State', cls: 'text', get: c => c.state },
		], caps, c => ({ 'data-capture': c.number })));
	});

	// diff's document (gtrace-bpf diff --format json): the speedup with its
	// interval, the GPU busy ratio, the kernels and APIs that moved (a bar
	// each: its change per iteration), what moved in analyze's terms.
	section('compare', () => {
		const b = body('compare'), X = D.diff;
		if (!X) {
			b.append(missing(D.diff_missing || 'No baseline given: gtrace-bpf report FILE --compare BASELINE compares two runs.'));
			return;
		}
		if (X.warning) b.append(el('div', { class: 'banner', 'data-banner': 'warn' }, X.warning));
		const per = X.whole_run ? '' : ' per iteration';
		const it = s => s.iterations.source === 'none' ? 'the whole run' :
			int(s.iterations.count) + ' iterations (' + s.iterations.source + (s.iterations.name ? ' "' + s.iterations.name + '"' : '') + ', median ' + dur(s.iterations.median_ns) + ')';
		b.append(el('div', { class: 'note' }, 'Baseline ' + X.baseline.path + ': ' + it(X.baseline) + '; this run ' + X.optimized.path + ': ' + it(X.optimized) + '.'));
		// "this run takes 10 ms per iteration, the baseline 12.3 ms: 1.23×
		// faster (95 % interval ...)"; a ratio is the baseline's over this run's
		const x = v => v.toFixed(v >= 10 ? 1 : 2) + '×';
		const words = (r, what, faster, slower) => {
			if (!r) return what + ': not available.';
			const p = r.point, iv = r.interval;
			let s = 'This run ' + what + ' ' + dur(r.opt_ns) + per + ', the baseline ' + dur(r.base_ns) + ': ';
			s += p >= 1 ? x(p) + ' ' + faster : x(1 / p) + ' ' + slower;
			if (iv) {
				const lo = p >= 1 ? iv[0] : 1 / iv[1], hi = p >= 1 ? iv[1] : 1 / iv[0];
				s += ' (95 % interval ' + x(lo) + '–' + x(hi) + ', bootstrap over the iterations' +
					(iv[0] <= 1 && iv[1] >= 1 ? ': not told apart from no change' : '') + ').';
			} else {
				s += ' (whole runs: no interval).';
			}
			return s;
		};
		b.append(el('div', { class: 'answer', 'data-speedup': X.speedup ? X.speedup.point : '' },
			el('div', { class: 'q' }, 'speed'), words(X.speedup, 'takes', 'faster', 'slower')));
		b.append(el('div', { class: 'answer' }, el('div', { class: 'q' }, 'GPU busy'),
			words(X.gpu_busy, 'keeps the GPU busy', 'less GPU time', 'more GPU time')));
		const change = (b0, b1, fmt) => {
			const d = b1 - b0, rel = b0 ? ' (' + (d > 0 ? '+' : '') + (100 * d / b0).toFixed(1) + ' %)' : '';
			return (d > 0 ? '+' : d < 0 ? '−' : '') + fmt(Math.abs(d)) + rel;
		};
		const classWords = { slower: 'slower', faster: 'faster', added: 'only in this run',
			removed: 'only in the baseline', unchanged: 'unchanged' };
		for (const [key, title] of [['kernels', 'Kernels'], ['apis', 'API calls']]) {
			const t = X[key];
			if (!t || !(t.rows || []).length) continue;
			const rows = t.rows.filter(r => r.class !== 'unchanged').slice(0, 25);
			b.append(el('h3', {}, title + ' that changed (' + Object.entries(t.classes).map(([k, v]) => v + ' ' + (classWords[k] || k)).join(', ') + ')'));
			if (!rows.length) { b.append(el('div', { class: 'note' }, 'None changed beyond the noise of the iterations.')); continue; }
			const max = Math.max(1, ...rows.map(r => Math.abs(r.delta || 0)));
			b.append(table([
				{ title: 'Change' + per, get: r => (r.delta > 0 ? '+' : r.delta < 0 ? '−' : '') + dur(Math.abs(r.delta || 0)) },
				{ title: '', get: r => bar(Math.abs(r.delta || 0) / max, (r.delta || 0) > 0 ? '#d9534f' : '#3c9d5d') },
				{ title: 'How', cls: 'text', get: r => classWords[r.class] || r.class },
				{ title: 'Baseline count', get: r => int(r.base.count) },
				{ title: 'This run count', get: r => int(r.opt.count) },
				{ title: 'Baseline median', get: r => dur(r.base.median_ns) },
				{ title: 'This run median', get: r => dur(r.opt.median_ns) },
				{ title: 'Name', cls: 'name', get: r => r.name },
			], rows, r => ({ 'data-diff': key, 'data-name': r.name, 'data-class': r.class })));
		}
		const an = X.analysis;
		if (an && an.valid) {
			const terms = Object.entries(an.terms || {}).filter(([, v]) => v);
			const bound = (an.bound || []).filter(v => v);
			b.append(el('h3', {}, 'Where the time went' + per + (bound.length === 2 ? ' (what bounds it: ' + (bound[0] === bound[1] ? bound[0] + ' in both' : bound[0] + ' in the baseline, ' + bound[1] + ' in this run') + ')' : '')));
			// every term is a time but the launches, a count (diff.h's diff_term)
			const val = (k, v) => k === 'launches' ? v.toFixed(1) : dur(v);
			b.append(table([
				{ title: 'What', cls: 'text', get: r => r[1].label || r[0].replace(/_/g, ' ') },
				{ title: 'Baseline', get: r => val(r[0], r[1].base) },
				{ title: 'This run', get: r => val(r[0], r[1].opt) },
				{ title: 'Change', get: r => change(r[1].base, r[1].opt, v => r[0] === 'launches' ? v.toFixed(1) : dur(v)) },
			], terms, r => ({ 'data-term': r[0], 'data-term-label': r[1].label || '' })));
			const fs = an.findings || [];
			if (fs.length) {
				const side = f => f ? f.severity + ', costs ' + dur(f.cost_ns) : 'not found';
				b.append(el('h3', {}, 'Findings that appeared, went or changed'));
				b.append(table([
					{ title: 'Rule', cls: 'text', get: f => f.id },
					{ title: 'Baseline', cls: 'text', get: f => side(f.base) },
					{ title: 'This run', cls: 'text', get: f => side(f.opt) },
				], fs, f => ({ 'data-diff-finding': f.id })));
			}
		} else if (an) {
			b.append(el('div', { class: 'note' }, 'Where the time went: ' + an.why));
		}
	});

	section('about', () => {
		const b = body('about'), t = D.trace, dec = t.decoder || {};
		const items = [
			['written by', D.generator],
			['events on the timeline', int(TL.events) + ' (' + int(TL.kept) + ' drawn exactly)'],
			['calls decoded', int(dec.calls)],
			['exits without an entry', int(dec.unmatched_exits)],
			['calls without an exit at the end', int(dec.open_at_end)],
			['records this build does not know', int(dec.unknown_records)],
			['launches with a placeholder kernel name', int(dec.placeholder_names)],
		];
		if (t.counters)
			for (const [k, v] of Object.entries(t.counters))
				if (k.startsWith('drop') || k.endsWith('fault')) items.push(['recorder: ' + k.replace(/_/g, ' '), int(v)]);
		if (t.merge)
			for (const [k, v] of Object.entries(t.merge)) items.push(['merge: ' + k.replace(/_/g, ' '), int(v)]);
		b.append(table([{ title: 'What', cls: 'text', get: r => r[0] }, { title: 'Count', get: r => r[1] }], items,
			r => ({ 'data-fact': r[0] })));
		b.append(el('div', { class: 'note' }, 'Every number in the tables is that of gtrace-bpf stats --format json on the same trace; the timeline, the utilization and the histograms are drawn from this file alone, with no request to any server.'));
	});
})();
