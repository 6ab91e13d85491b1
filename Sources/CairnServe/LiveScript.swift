/// `live.js`: the status page's live section, filled from `/events`. Hand-written, no framework, no build step;
/// every name and reason from a run goes into the page as text (`textContent`), never as markup.
enum LiveScript {
    static let source = #"""
'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const live = $('live');
  if (!live || !window.EventSource) return;
  const number = (n) => (n || 0).toLocaleString('en-US');
  const bytes = (b) => {
    const units = ['B', 'kB', 'MB', 'GB', 'TB'];
    let value = b || 0, unit = 0;
    while (value >= 1000 && unit < units.length - 1) { value /= 1000; unit += 1; }
    return (unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)) + ' ' + units[unit];
  };
  const duration = (s) => {
    if (s < 1) return Math.round(s * 1000) + ' ms';
    if (s < 60) return s.toFixed(1) + ' s';
    if (s < 3600) return Math.floor(s / 60) + ' min ' + Math.round(s % 60) + ' s';
    return Math.floor(s / 3600) + ' h ' + Math.round((s % 3600) / 60) + ' min';
  };
  const capital = (word) => word ? word[0].toUpperCase() + word.slice(1) : '';
  const doing = { import: 'Importing', sync: 'Syncing', restore: 'Restoring', 'dry-run': 'Looking (dry run)',
                  'tape build': 'Building a tape' };
  const endings = {
    success: 'finished', someFailed: 'finished; some files failed', stoppedAtErrorLimit: 'stopped at the error limit',
    interrupted: 'was interrupted', held: 'was held by a safety rail', failed: 'failed',
  };
  const countNames = [
    ['filesSeen', 'seen'], ['hashed', 'hashed'], ['new', 'new'], ['duplicates', 'duplicates'], ['ready', 'imported'],
    ['keptWithoutPreview', 'kept without preview'], ['failed', 'failed'], ['skipped', 'skipped'], ['retries', 'retried'],
  ];
  let run = null;
  let painting = false;
  // Thumbnails shown, and the newest one waiting for its turn: at most four a second are added, the last always.
  const shown = new Set();
  let waitingThumbnail = null;
  setInterval(() => {
    if (waitingThumbnail) { thumbnail(waitingThumbnail.sha1, waitingThumbnail.file); waitingThumbnail = null; }
  }, 250);
  // Runs that end after the page opened change what the server rendered (the runs, the last run, the newest).
  const openedAt = Date.now() - 2000;
  const recorded = ['last-synced', 'timeline', 'counts', 'failures', 'review', 'newest'];

  async function refreshRecord() {
    let page;
    try {
      const answer = await fetch(location.pathname, { credentials: 'same-origin', headers: { Accept: 'text/html' } });
      if (!answer.ok) return;
      // Parsed apart: nothing in it runs, and what the server rendered is already escaped.
      page = new DOMParser().parseFromString(await answer.text(), 'text/html');
    } catch (e) { return; }
    for (const id of recorded) {
      const fresh = page.getElementById(id), old = $(id);
      if (fresh && old) old.replaceWith(document.importNode(fresh, true));
      else if (fresh) document.querySelector('footer').before(document.importNode(fresh, true));
      else if (old) old.remove();
    }
  }

  const element = (tag, text, className) => {
    const made = document.createElement(tag);
    if (text !== undefined) made.textContent = text;
    if (className) made.className = className;
    return made;
  };
  const keep = (list, limit) => { while (list.children.length > limit) list.lastElementChild.remove(); };

  function start(event) {
    run = { id: event.runId, command: event.command || 'run', phase: null, phases: [], progress: null, counts: null,
            lanes: [], failed: 0, end: null, tape: null };
    for (const id of ['live-phases', 'live-feed', 'live-failures', 'live-newest']) $(id).replaceChildren();
    $('live-lanes').tBodies[0].replaceChildren();
    $('live-failed').hidden = true;
    $('live-newest-box').hidden = true;
    $('live-tape').hidden = true;
    live.hidden = false;
    const note = $('refresh-note');
    if (note) note.textContent = 'live';
  }

  function feed(text, className) {
    const list = $('live-feed');
    list.prepend(element('li', text, className));
    keep(list, 60);
  }

  function handle(event) {
    if (event.event === 'runStart' || !run || run.id !== event.runId) start(event);
    if (event.counts) run.counts = event.counts;
    switch (event.event) {
      case 'phaseStart':
        run.phase = event.phase;
        run.progress = null;
        run.phases.push({ phase: event.phase, seconds: null });
        break;
      case 'phaseEnd': {
        const entry = run.phases.findLast((p) => p.phase === event.phase);
        if (entry) entry.seconds = event.durationSeconds;
        break;
      }
      case 'progress':
        run.phase = event.phase;
        run.progress = event.progress;
        if (event.lanes) run.lanes = event.lanes;
        break;
      case 'hashed': feed('hashed ' + event.file); break;
      case 'imported':
        feed('imported ' + event.file);
        if (/^[0-9a-f]{40}$/.test(event.sha1 || '') && !shown.has(event.sha1)) {
          waitingThumbnail = { sha1: event.sha1, file: event.file };
        }
        break;
      case 'derived':
        // A thumbnail shows as soon as it is made, before the item's clip.
        if (event.role === 'thumbnail' && /^[0-9a-f]{40}$/.test(event.sha1 || '') && !shown.has(event.sha1)) {
          waitingThumbnail = { sha1: event.sha1, file: event.file };
        }
        break;
      case 'stamped': feed(number(event.count) + ' confirmed deleted at the source'); break;
      case 'destinationChecked': feed('checked the destination'); break;
      case 'note': feed(event.message); break;
      case 'warning': feed(event.message, 'warning'); break;
      case 'error':
        feed((event.file ? event.file + ': ' : '') + event.message, 'error');
        if (event.file) failure(event);
        break;
      case 'tapeStarted':
        run.tape = { name: event.tape, player: null };
        run.progress = { completed: 0, total: event.clips, fraction: 0 };
        feed('tape ' + event.tape + ': ' + number(event.clips) + ' clips, ' + number(event.clips - event.toMake) + ' already made');
        break;
      case 'tapeClipReady':
        // The run's counts, as its end will say them: a clip ready counts as ready, one left out as failed.
        run.counts = Object.assign({}, run.counts, { ready: event.clipsReady });
        run.progress = { completed: event.clipsReady, total: event.clips, fraction: event.clipsReady / Math.max(1, event.clips) };
        feed('clip ' + number(event.clipsReady) + ' of ' + number(event.clips) + (event.how === 'reused' ? ' (reused) ' : ' ') + event.path);
        break;
      case 'tapeClipSkipped':
        run.counts = Object.assign({}, run.counts, { failed: ((run.counts || {}).failed || 0) + 1 });
        feed(event.path + ': ' + event.reason, 'error');
        failure({ file: event.path, message: (event.cutShort ? 'cut short: ' : '') + event.reason });
        break;
      case 'tapePlayable':
        feed('playable: ' + number(event.clipsReady) + ' of ' + number(event.clips) + ' clips');
        if (run.tape && !run.tape.player) run.tape.player = playTape(run.tape.name);
        break;
      case 'tapeFinished':
        feed('tape ' + event.tape + ': ' + number(event.encoded) + ' clips made, ' + number(event.reused) + ' reused'
             + (event.movie ? '; tape.mp4 written' : ''));
        if (run.tape) {
          run.tape.movie = Boolean(event.movie);
          if (!run.tape.player) run.tape.player = playTape(run.tape.name);
          else if (run.tape.movie && run.tape.playMovie) run.tape.playMovie();
        }
        break;
      case 'runEnd':
        run.end = event;
        run.lanes = [];
        if (event.message) feed(event.message, event.outcome === 'success' ? undefined : 'error');
        if (Date.parse(event.time) >= openedAt) setTimeout(refreshRecord, 500);
        break;
    }
    if (!painting) { painting = true; requestAnimationFrame(paint); }
  }

  function thumbnail(sha1, file) {
    if (shown.has(sha1)) return;
    shown.add(sha1);
    const figure = element('figure');
    const picture = element('img');
    picture.width = 160; picture.height = 160;
    picture.alt = file.split('/').pop();
    // The run may not have committed the thumbnail's row yet: one more try a little later, then let it go.
    let tries = 0;
    picture.addEventListener('error', () => {
      tries += 1;
      if (tries === 1) setTimeout(() => { picture.src = 'thumbnails/' + sha1 + '?again'; }, 3000);
      else figure.remove();
    });
    picture.src = 'thumbnails/' + sha1;
    figure.append(picture, element('figcaption', file.split('/').pop()));
    $('live-newest').prepend(figure);
    keep($('live-newest'), 24);
    $('live-newest-box').hidden = false;
  }

  // The tape as it grows: its HLS playlist read again every few seconds, each clip's init segment and segments
  // appended to one Media Source buffer in sequence (a clip's timestamps start at zero); tape.mp4 when the
  // browser has no Media Source for H.264, once the build has written it.
  const tapeType = 'video/mp4; codecs="avc1.640028,mp4a.40.2"';
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  async function playTape(name) {
    const video = $('live-tape-player'), note = $('live-tape-note');
    $('live-tape-title').textContent = 'The tape ' + name;
    $('live-tape').hidden = false;
    const folder = new URL('tapes/' + encodeURIComponent(name) + '/', location.href);
    const tape = run.tape;
    const playMovie = () => {
      tape.playMovie = () => { video.src = new URL('tape.mp4', folder).href; note.textContent = 'tape.mp4'; };
      if (tape.movie) tape.playMovie();
      else note.textContent = 'It plays here once tape.mp4 is written.';
    };
    if (!window.MediaSource || !MediaSource.isTypeSupported(tapeType)) { playMovie(); return 'movie'; }
    const source = new MediaSource();
    video.src = URL.createObjectURL(source);
    await new Promise((resolve) => source.addEventListener('sourceopen', resolve, { once: true }));
    const buffer = source.addSourceBuffer(tapeType);
    buffer.mode = 'sequence';
    const settle = () => new Promise((resolve, reject) => {
      buffer.addEventListener('updateend', resolve, { once: true });
      buffer.addEventListener('error', () => reject(new Error('the browser refused a segment')), { once: true });
    });
    const append = async (uri) => {
      const answer = await fetch(new URL(uri, folder), { credentials: 'same-origin', cache: 'no-store' });
      if (!answer.ok) throw new Error(uri + ': ' + answer.status);
      const data = await answer.arrayBuffer();
      // What was played long ago goes, so a long tape stays within the browser's buffer quota.
      if (video.currentTime > 60 && buffer.buffered.length && buffer.buffered.start(0) < video.currentTime - 30) {
        const removed = settle();
        buffer.remove(0, video.currentTime - 30);
        await removed;
      }
      const appended = settle();
      buffer.appendBuffer(data);
      await appended;
    };
    let taken = 0, map = null, ended = false;
    try {
      while (!ended) {
        const answer = await fetch(new URL('playlist.m3u8', folder), { credentials: 'same-origin', cache: 'no-store' });
        if (!answer.ok) throw new Error('playlist.m3u8: ' + answer.status);
        const segments = [];
        let current = null;
        for (const line of (await answer.text()).split('\n')) {
          if (line.startsWith('#EXT-X-MAP:URI="')) current = line.slice(16, line.indexOf('"', 16));
          else if (line === '#EXT-X-ENDLIST') ended = true;
          else if (line && !line.startsWith('#')) segments.push({ uri: line, map: current });
        }
        for (; taken < segments.length; taken += 1) {
          const segment = segments[taken];
          if (segment.map && segment.map !== map) { await append(segment.map); map = segment.map; }
          await append(segment.uri);
          if (taken === 0) video.play().catch(() => {});
        }
        note.textContent = number(taken) + ' segments' + (ended ? ', the whole tape' : ', growing');
        if (!ended) await sleep(2000);
      }
      source.endOfStream();
    } catch (e) {
      note.textContent = 'The player stopped: ' + e.message;
      playMovie();
    }
    return 'stream';
  }

  function failure(event) {
    run.failed += 1;
    const item = element('li');
    item.append(element('code', event.file, 'path'), ' ', element('span', event.message, 'reason'));
    if (event.category) item.append(' ', element('small', '(' + event.category + ')'));
    $('live-failures').prepend(item);
    keep($('live-failures'), 200);
    $('live-failed-count').textContent = number(run.failed);
    $('live-failed').hidden = false;
  }

  function paint() {
    painting = false;
    if (!run) return;
    const verb = doing[run.command] || capital(run.command);
    const headline = $('headline');
    const counts = run.counts || {};
    let title;
    if (run.end) {
      title = capital(run.command) + ' ' + (endings[run.end.outcome] || run.end.outcome);
      if (run.end.durationSeconds) title += ' in ' + duration(run.end.durationSeconds);
      headline.className = run.end.outcome === 'success' ? 'state-success' : 'state-failed';
      $('live-title').textContent = 'Last run ' + run.id;
    } else {
      // "Importing · hashing", "Syncing · importing", and for an import's own phase just "Importing".
      title = verb + (run.phase && verb.toLowerCase() !== run.phase ? ' · ' + run.phase : '');
      if (run.progress && run.progress.total !== undefined) {
        title += ' · ' + number(run.progress.completed) + ' of ' + number(run.progress.total);
      }
      headline.className = 'state-syncing';
      $('live-title').textContent = 'This run ' + run.id;
    }
    headline.textContent = title;
    headline.dataset.runEnded = run.end ? 'true' : 'false';

    const progress = run.progress;
    const bar = $('live-progress');
    const figures = [];
    if (run.end && (run.end.outcome === 'success' || run.end.outcome === 'someFailed')) {
      bar.value = 1;
    } else if (progress && progress.fraction !== undefined) {
      bar.value = progress.fraction;
    } else if (progress) {
      bar.removeAttribute('value');
    }
    const unit = run.tape ? ' clips' : ' items';
    if (run.end && run.tape) {
      figures.push(number(counts.ready) + ' clips ready', number(counts.failed) + ' left out');
      if (run.end.durationSeconds) figures.push('in ' + duration(run.end.durationSeconds));
    } else if (run.end) {
      figures.push(number(counts.ready) + ' imported', number(counts.failed) + ' failed');
      if (run.end.durationSeconds) figures.push('in ' + duration(run.end.durationSeconds));
    } else if (progress) {
      figures.push(number(progress.completed) + (progress.total !== undefined ? ' of ' + number(progress.total) : '') + unit);
      if (progress.bytesTotal !== undefined) figures.push(bytes(progress.bytesCompleted) + ' of ' + bytes(progress.bytesTotal));
      if (progress.bytesPerSecond) figures.push(bytes(progress.bytesPerSecond) + '/s');
      else if (progress.itemsPerSecond) figures.push(progress.itemsPerSecond.toFixed(1) + ' items/s');
      if (progress.etaSeconds !== undefined && !run.end) figures.push('about ' + duration(progress.etaSeconds) + ' left');
    }
    $('live-figures').textContent = figures.join(' · ');
    bar.dataset.completed = progress ? String(progress.completed) : '0';
    $('live-state').textContent = run.end ? 'ended' : 'live';

    const line = $('live-counts');
    line.replaceChildren();
    (run.tape ? [['ready', 'clips ready'], ['failed', 'left out']] : countNames).forEach(([key, name], index) => {
      if (index > 0) line.append(' · ');
      const value = element('span', number(counts[key]));
      value.id = 'live-count-' + key;
      line.append(value, ' ' + name);
    });

    // A tape build has clips, not phases.
    $('live-phases').parentElement.hidden = run.tape !== null;
    const phases = $('live-phases');
    phases.replaceChildren(...run.phases.map((p) =>
      element('li', capital(p.phase) + (p.seconds === null ? ' …' : ' ' + duration(p.seconds)))));

    $('live-lanes').parentElement.hidden = run.lanes.length === 0;
    const lanes = $('live-lanes').tBodies[0];
    lanes.replaceChildren(...run.lanes.map((lane) => {
      const row = element('tr');
      const files = (lane.holding || []).map((file) => file.split('/').pop()).sort().join(', ');
      row.append(element('th', lane.name), element('td', lane.busy + ' of ' + lane.width + ' busy'),
                 element('td', lane.queued ? number(lane.queued) + ' waiting' : ''), element('td', files, 'holding'));
      return row;
    }));
  }

  // The shared queue is other processes' (workers on other hosts write no run log here): its status is read again
  // every two seconds, into the elements the server rendered.
  const plural = (n, word) => number(n) + ' ' + word + (n === 1 ? '' : 's');
  let workersHeadline = null;
  async function refreshQueue() {
    let status;
    try {
      const answer = await fetch('queue.json', { credentials: 'same-origin', cache: 'no-store' });
      if (!answer.ok) { $('queue-counts').textContent = 'the queue cannot be read: ' + (await answer.text()).trim(); return; }
      status = await answer.json();
    } catch (e) { return; }
    const oldest = status.oldestWaitingSeconds !== undefined ? ' (oldest ' + Math.round(status.oldestWaitingSeconds) + ' s)' : '';
    const counts = $('queue-counts');
    counts.className = '';
    counts.textContent = 'waiting ' + status.waiting + oldest + ' · running ' + status.running + ' · done ' + status.done
      + ' · failed ' + status.failed + (status.workers.length ? '' : ' · no worker');
    $('queue-workers').tBodies[0].replaceChildren(...status.workers.map((worker) => {
      const row = element('tr');
      row.append(element('th', worker.host + ' pid ' + worker.pid), element('td', plural(worker.leases, 'lease')),
                 element('td', 'last beat ' + Math.round(worker.silentSeconds) + ' s ago'));
      return row;
    }));
    $('queue-imports').replaceChildren(...status.imports.map((held) => element('li', held.holder + ' from ' + held.from)));
    // With no run of this library going on, the headline says what the workers do, and gives the line back after.
    const headline = $('headline');
    if ((!run || run.end) && status.running > 0) {
      if (!workersHeadline) workersHeadline = { text: headline.textContent, className: headline.className };
      headline.textContent = 'Workers · ' + plural(status.running, 'job') + ' running, ' + number(status.waiting) + ' waiting';
      headline.className = 'state-syncing';
    } else if (workersHeadline) {
      if (run) paint();
      else { headline.textContent = workersHeadline.text; headline.className = workersHeadline.className; }
      workersHeadline = null;
    }
  }
  if ($('queue')) setInterval(refreshQueue, 2000);

  const stream = new EventSource('events');
  stream.onmessage = (message) => {
    let event;
    try { event = JSON.parse(message.data); } catch (e) { return; }
    handle(event);
  };
  stream.onopen = () => { if (run && !run.end) $('live-state').textContent = 'live'; };
  stream.onerror = () => { $('live-state').textContent = 'reconnecting…'; };
})();
"""#
}
