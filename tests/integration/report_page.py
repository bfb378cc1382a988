#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Opens report pages in headless Chromium and says what a person would see.

  report_page.py OUT.json PAGE.html [PAGE.html ...]

Drives Debian's chromium over the DevTools protocol on a pipe
(--remote-debugging-pipe: NUL-separated JSON on file descriptors 3 and 4),
so that no websocket module and no port are needed.  For each page it
writes to OUT.json (a list, in the order given) what the tests check:

  errors     console errors, uncaught exceptions and error log entries
  requests   every network request but the page's own file
  sections   the ids of the page's sections
  banners    the text of its banners; missing: its "not available" texts
  kernels_time / kernels_count / sync / sites / flame / processes / ranks / api / copies / metrics /
  speedup / diff_rows (the comparison's):
             the rows of those tables as their data attributes hold them
  facts      the "About" table
  timeline   {"colored": pixels of colour in the drawing area of a
             screenshot at half size (labels, grid and background are
             grey), "v0", "v1"}
  zoomed     the same after a mouse-wheel turn over the timeline, and
             "changed": whether the screenshot's pixels changed
  arrow      after a click on a GPU kernel linked to its launch (when the
             page has one): the detail text and the arrows drawn
  finding_links  the text of the findings' links to the timeline
  terms, term_cells, speed_text  the comparison's "where the time went"
             rows (data and cells) and its speed sentence
  row_boxes  the timeline's rows as first drawn: label, type, y, h
  fold       where the page has threads without CUDA calls: the timeline's
             row labels before and after a click on their folded row
  metric_fold  the same for a GPU's folded metric lanes
  axis_deep  the axis' labels of two views zoomed in at 60 % of the trace
             (2 us and 200 us wide)
  load_ms    from navigation to the load event

GT_REPORT_SHOTS=DIR also writes DIR/PAGE.html.png, a screenshot of each
whole page, and DIR/PAGE.html.top.png, of its top down to the timeline.
Exit status 0 when every page loaded (the checks are the caller's), 1 with
one line on stderr when the browser could not be driven.
"""
import base64
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

CHROMIUM = os.environ.get('GT_CHROMIUM', 'chromium')
TIMEOUT = float(os.environ.get('GT_BROWSER_TIMEOUT', '60'))


class Browser:
    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix='gt-chromium-')
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def fds():
            # the protocol's descriptors: 3 it reads, 4 it writes (kept open
            # past the exec by pass_fds); first out of the way of each other
            r, w = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        args = [CHROMIUM, '--headless=new', '--remote-debugging-pipe', '--no-sandbox',
                '--disable-gpu', '--no-first-run', '--no-default-browser-check',
                '--disable-background-networking', '--disable-component-update',
                '--disable-sync', '--disable-default-apps', '--disable-extensions',
                '--metrics-recording-only', '--mute-audio', '--hide-scrollbars',
                '--force-device-scale-factor=1', '--window-size=1400,1000',
                # nothing resolves: a request, were the page to make one, fails
                # here rather than reach out
                '--host-resolver-rules=MAP * ~NOTFOUND',
                '--user-data-dir=' + self.profile, 'about:blank']
        self.proc = subprocess.Popen(args, preexec_fn=fds, pass_fds=(3, 4),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self.buf = b''
        self.next_id = 0
        self.events = []

    def close(self):
        try:
            self.call('Browser.close', timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_child)
        os.close(self.from_child)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self, deadline):
        while b'\0' not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError('no answer from chromium')
            import select
            r, _, _ = select.select([self.from_child], [], [], left)
            if not r:
                continue
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                raise EOFError('chromium closed the protocol pipe (did it start?)')
            self.buf += chunk
        msg, self.buf = self.buf.split(b'\0', 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=TIMEOUT):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params or {}}
        if session:
            msg['sessionId'] = session
        os.write(self.to_child, json.dumps(msg).encode() + b'\0')
        deadline = time.monotonic() + timeout
        while True:
            m = self._read(deadline)
            if m.get('id') == self.next_id:
                if 'error' in m:
                    raise RuntimeError('%s: %s' % (method, m['error'].get('message')))
                return m.get('result', {})
            self.events.append(m)

    def wait_event(self, method, session, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            for i, m in enumerate(self.events):
                if m.get('method') == method and m.get('sessionId') == session:
                    return self.events.pop(i)
            self.events.append(self._read(deadline))


def png_pixels(data):
    """Width, height and rows of RGB(A) tuples of an 8-bit PNG."""
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
    pos, idat, w = 8, b'', 0
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b'IHDR':
            w, h, depth, ctype = struct.unpack('>IIBB', chunk[:10])
            assert depth == 8 and ctype in (2, 6), 'PNG of depth %d type %d' % (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b'IDAT':
            idat += chunk
    raw = zlib.decompress(idat)
    stride, rows, prev = w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def colored(png, left, top):
    """Pixels right of left and below top whose channels differ by more than
    40: colour, not the grey of text, grid and background."""
    w, h, bpp, rows = png_pixels(png)
    n = 0
    for y in range(top, h):
        r = rows[y]
        for x in range(left, w):
            p = r[x * bpp:x * bpp + 3]
            if max(p) - min(p) > 40:
                n += 1
    return n


JS_SUMMARY = r'''(() => {
  const rows = sel => [...document.querySelectorAll(sel)].map(tr => Object.assign({}, tr.dataset));
  return JSON.stringify({
    sections: [...document.querySelectorAll('main > section')].map(s => s.id),
    banners: [...document.querySelectorAll('.banner')].map(b => b.textContent),
    missing: [...document.querySelectorAll('.missing')].map(b => b.closest('section') ? b.closest('section').id + ': ' + b.textContent : b.textContent),
    kernels_time: rows('tr.kern-time'),
    kernels_count: rows('tr.kern-count'),
    sync: rows('tr[data-sync]'),
    sites: rows('tr[data-site]'),
    flame: rows('[data-flame]'),
    processes: rows('#processes tr[data-pid]'),
    ranks: rows('#ranks tr[data-rank]'),
    api: rows('tr[data-api]'),
    copies: rows('tr[data-copy]'),
    metrics: rows('tr[data-metric]'),
    metrics_scoped: rows('tr[data-gpum-scope]'),
    speedup: rows('[data-speedup]'),
    diff_rows: rows('tr[data-diff]'),
    facts: rows('tr[data-fact]'),
    charts: document.querySelectorAll('.uplot').length,
    note: (document.getElementById('tl-note') || {}).textContent,
    answers: rows('[data-answer]'),
    phases: rows('[data-phases]'),
    scope_heads: [...document.querySelectorAll('h3[data-scope]')].map(h => h.dataset.scope.split(':')[0]),
    findings: rows('[data-finding]'),
    finding_links: [...document.querySelectorAll('[data-finding] a')].map(a => a.textContent),
    terms: rows('tr[data-term]'),
    term_cells: [...document.querySelectorAll('tr[data-term]')].map(tr => [...tr.children].map(td => td.textContent)),
    speed_text: [...document.querySelectorAll('[data-speedup]')].map(e => e.textContent),
    row_boxes: window.gtReport ? window.gtReport.rowBoxes() : null,
  });
})()'''


def evaluate(b, s, expr):
    r = b.call('Runtime.evaluate', {'expression': expr, 'returnByValue': True, 'awaitPromise': True}, s)
    if 'exceptionDetails' in r:
        raise RuntimeError('page script: ' + json.dumps(r['exceptionDetails'])[:300])
    return r['result'].get('value')


SHOT_SCALE = 0.5	# screenshots to count pixels in: half size, a quarter of the decoding


def canvas_shot(b, s):
    box = json.loads(evaluate(b, s, '''(() => { const c = document.getElementById('tl-canvas');
        c.scrollIntoView(); const r = c.getBoundingClientRect();
        return JSON.stringify({x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: Math.min(r.height, 600)}); })()'''))
    if box['w'] < 1 or box['h'] < 1:
        return None, box
    shot = b.call('Page.captureScreenshot', {'format': 'png', 'captureBeyondViewport': True,
                                             'clip': {'x': box['x'], 'y': box['y'], 'width': box['w'],
                                                      'height': box['h'], 'scale': SHOT_SCALE}}, s)
    return base64.b64decode(shot['data']), box


def frames(b, s, n=2):
    evaluate(b, s, 'new Promise(r => { let k = %d; const f = () => --k ? requestAnimationFrame(f) : r(1); requestAnimationFrame(f); })' % (n + 1))


def view(b, s):
    return json.loads(evaluate(b, s, "JSON.stringify({v0: +document.getElementById('tl-canvas').dataset.v0, v1: +document.getElementById('tl-canvas').dataset.v1})"))


def click_spot(b, s, spot):
    """Clicks where window.gtReport.SPOT says (a point, or null: no click).
    Returns whether it clicked."""
    at = evaluate(b, s, 'window.gtReport ? JSON.stringify(window.gtReport.%s) : "null"' % spot)
    at = json.loads(at) if at else None
    if not at:
        return False
    b.call('Input.dispatchMouseEvent', {'type': 'mouseMoved', 'x': at['x'], 'y': at['y']}, s)
    for kind in ('mousePressed', 'mouseReleased'):
        b.call('Input.dispatchMouseEvent', {'type': kind, 'x': at['x'], 'y': at['y'],
                                            'button': 'left', 'clickCount': 1}, s)
    frames(b, s)
    return True


def check_page(b, path):
    url = 'file://' + os.path.abspath(path)
    target = b.call('Target.createTarget', {'url': 'about:blank'})['targetId']
    s = b.call('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
    for dom in ('Runtime', 'Log', 'Network', 'Page'):
        b.call(dom + '.enable', {}, s)
    b.call('Emulation.setDeviceMetricsOverride', {'width': 1400, 'height': 1000, 'deviceScaleFactor': 1,
                                                  'mobile': False}, s)
    t0 = time.monotonic()
    b.call('Page.navigate', {'url': url}, s)
    b.wait_event('Page.loadEventFired', s)
    load_ms = (time.monotonic() - t0) * 1000
    frames(b, s)
    out = json.loads(evaluate(b, s, JS_SUMMARY))
    out['load_ms'] = round(load_ms)
    png, box = canvas_shot(b, s)
    # the drawing area: right of the labels (210 px), below the axis (24 px)
    area = (int(211 * SHOT_SCALE), int(25 * SHOT_SCALE))
    out['timeline'] = dict(view(b, s), colored=colored(png, *area) if png else 0, height=box['h'])
    # a wheel turn over the middle of the drawing area zooms in
    cx, cy = box['x'] + 210 + (box['w'] - 210) / 2, box['y'] + min(40, box['h'] / 2)
    top = json.loads(evaluate(b, s, 'JSON.stringify({x: scrollX, y: scrollY})'))
    b.call('Input.dispatchMouseEvent', {'type': 'mouseWheel', 'x': cx - top['x'], 'y': cy - top['y'],
                                        'deltaX': 0, 'deltaY': -600}, s)
    frames(b, s)
    png2, _ = canvas_shot(b, s)
    out['zoomed'] = dict(view(b, s), colored=colored(png2, *area) if png2 else 0,
                         changed=png2 is not None and png != png2)
    # a click on a GPU kernel linked to its launch, when there is one
    if click_spot(b, s, 'linkedKernelSpot()'):
        out['arrow'] = json.loads(evaluate(b, s, '''JSON.stringify({detail: document.getElementById('tl-detail').textContent,
            arrows: window.gtReport.arrows().length})'''))
    # a click on the row of threads without CUDA calls unfolds them, one
    # on a GPU's folded metric lanes too
    for key, spot in (('fold', 'foldSpot()'), ('metric_fold', 'foldSpot("m")')):
        before = json.loads(evaluate(b, s, 'JSON.stringify(window.gtReport ? window.gtReport.rowLabels() : [])'))
        if click_spot(b, s, spot):
            out[key] = {'before': before,
                        'after': json.loads(evaluate(b, s, 'JSON.stringify(window.gtReport.rowLabels())'))}
    # the axis zoomed in far from 0: 2 us at 60 % of the trace, and 200 us
    if out['timeline'].get('v1'):
        end = out['timeline']['v1']
        out['axis_deep'] = [json.loads(evaluate(b, s, 'JSON.stringify(window.gtReport.axisAt(%r, %r))' % (end * 0.6, end * 0.6 + w)))
                            for w in (2000, 200000)]
    # what the page asked for and said
    errors, requests = [], []
    for m in b.events:
        if m.get('sessionId') != s:
            continue
        meth, p = m.get('method'), m.get('params', {})
        if meth == 'Runtime.exceptionThrown':
            errors.append(p['exceptionDetails'].get('exception', {}).get('description') or p['exceptionDetails'].get('text'))
        elif meth == 'Runtime.consoleAPICalled' and p.get('type') in ('error', 'assert'):
            errors.append(' '.join(str(a.get('value', a.get('description'))) for a in p.get('args', [])))
        elif meth == 'Log.entryAdded' and p['entry'].get('level') == 'error':
            errors.append(p['entry'].get('text'))
        elif meth == 'Network.requestWillBeSent' and p['request']['url'] != url:
            requests.append(p['request']['url'])
    b.events = [m for m in b.events if m.get('sessionId') != s]
    shots = os.environ.get('GT_REPORT_SHOTS')
    if shots:
        # the whole page as it was left, for a person to look at
        evaluate(b, s, 'window.scrollTo(0, 0)')
        m = b.call('Page.getLayoutMetrics', {}, s)['cssContentSize']
        shot = b.call('Page.captureScreenshot', {'format': 'png', 'captureBeyondViewport': True,
                                                 'clip': {'x': 0, 'y': 0, 'width': m['width'],
                                                          'height': min(m['height'], 6000), 'scale': 1}}, s)
        with open(os.path.join(shots, os.path.basename(path) + '.png'), 'wb') as f:
            f.write(base64.b64decode(shot['data']))
        # and the top of the page down to the timeline's end, as the docs show it
        r = json.loads(evaluate(b, s, "JSON.stringify(document.getElementById('tl-detail').getBoundingClientRect())"))
        shot = b.call('Page.captureScreenshot', {'format': 'png', 'captureBeyondViewport': True,
                                                 'clip': {'x': 0, 'y': 0, 'width': m['width'],
                                                          'height': r['bottom'] + 8, 'scale': 1}}, s)
        with open(os.path.join(shots, os.path.basename(path) + '.top.png'), 'wb') as f:
            f.write(base64.b64decode(shot['data']))
    out['errors'] = errors
    out['requests'] = requests
    b.call('Target.closeTarget', {'targetId': target})
    return out


def main():
    if len(sys.argv) < 3:
        print('usage: report_page.py OUT.json PAGE.html...', file=sys.stderr)
        return 2
    if not shutil.which(CHROMIUM):
        print('report_page.py: %s not found (tools/install-deps.sh installs it)' % CHROMIUM, file=sys.stderr)
        return 1
    b = Browser()
    try:
        results = [check_page(b, p) for p in sys.argv[2:]]
    except (OSError, EOFError, TimeoutError, RuntimeError) as e:
        print('report_page.py: cannot drive chromium: %s' % e, file=sys.stderr)
        return 1
    finally:
        b.close()
    with open(sys.argv[1], 'w') as f:
        json.dump(results, f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
