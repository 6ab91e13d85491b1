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
  const doing = { import: 'Importing', sync: 'Syncing', restore: 'Restoring', 'dry-run': 'Looking (dry run)' };
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
            lanes: [], failed: 0, end: null };
    for (const id of ['live-phases', 'live-feed', 'live-failures', 'live-newest']) $(id).replaceChildren();
    $('live-lanes').tBodies[0].replaceChildren();
    $('live-failed').hidden = true;
    $('live-newest-box').hidden = true;
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
    if (run.end) {
      figures.push(number(counts.ready) + ' imported', number(counts.failed) + ' failed');
      if (run.end.durationSeconds) figures.push('in ' + duration(run.end.durationSeconds));
    } else if (progress) {
      figures.push(number(progress.completed) + (progress.total !== undefined ? ' of ' + number(progress.total) : '') + ' items');
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
    countNames.forEach(([key, name], index) => {
      if (index > 0) line.append(' · ');
      const value = element('span', number(counts[key]));
      value.id = 'live-count-' + key;
      line.append(value, ' ' + name);
    });

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
