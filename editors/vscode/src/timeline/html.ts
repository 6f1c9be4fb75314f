/** The Scan Timeline page. A pure function, so the browser test loads exactly what VS Code shows. */
export interface TimelinePageResources {
  /** The webview's CSP source (webview.cspSource); for a test page, `file:`. */
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
}

export function timelineHtml(r: TimelinePageResources): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${r.cspSource}; script-src 'nonce-${r.nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${r.styleUri}">
<title>Scan Timeline</title>
</head>
<body>
<main id="timeline" aria-label="Scan Timeline">
  <p id="status" role="status">No scanback session.</p>
  <p id="error" role="alert" hidden></p>
  <section id="range" aria-label="Recorded range" hidden>
    <div id="where" class="where" role="status" hidden>
      <span id="where-text"></span>
      <button type="button" id="go-live" title="Go to Live (End)">Go to Live</button>
    </div>
    <div class="position-row">
      <p class="position">at <span id="position-label"></span><span id="target-label" hidden></span></p>
      <div class="zoom" role="group" aria-label="Zoom the cycle axis">
        <span id="zoom-label" hidden></span>
        <button type="button" id="zoom-out" title="Zoom out (Ctrl+wheel, -)" aria-label="Zoom out">−</button>
        <button type="button" id="zoom-in" title="Zoom in (Ctrl+wheel, +)" aria-label="Zoom in">+</button>
        <button type="button" id="zoom-all" title="Show the whole history (0)" aria-label="Show the whole history">all</button>
      </div>
    </div>
    <div id="track" role="slider" tabindex="0" aria-label="Position in the recording, in cycles"
         aria-valuemin="0" aria-valuemax="0" aria-valuenow="0">
      <div class="recorded"></div>
      <div id="gaps"></div>
      <div id="fault-marker" class="fault-marker" hidden></div>
      <div id="live-edge" class="live-edge" hidden></div>
      <div id="cursor" class="cursor"></div>
      <div id="preview" class="preview" hidden></div>
    </div>
    <div id="markers" class="markers" aria-label="Markers: breakpoint hits, writes, faults, gaps"></div>
    <div id="ticks" class="ticks" aria-hidden="true"></div>
    <div class="labels">
      <span id="first-label"></span>
      <span id="last-label"></span>
    </div>
    <p id="recording-text" class="fault-text" role="status" hidden></p>
    <section id="lanes" aria-label="Signals"></section>
    <p id="lanes-empty" class="hint">Waveforms: <b>Add to Scan Timeline</b> in the Variables or Watch view's context menu.</p>
    <p id="hint" class="hint">Click or drag to go to a cycle; ←/→ one cycle, PgUp/PgDn a tenth, Home the start, End the live edge; Ctrl+wheel or +/− zooms, Shift+wheel scrolls.</p>
    <p id="fault-text" class="fault-text" hidden></p>
  </section>
  <section id="stats" aria-label="Statistics" hidden>
    <table>
      <tbody id="stats-rows"></tbody>
    </table>
  </section>
</main>
<script nonce="${r.nonce}" src="${r.scriptUri}"></script>
</body>
</html>
`;
}
