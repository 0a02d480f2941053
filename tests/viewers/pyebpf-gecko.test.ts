/* pyebpf: load pyebpf's Gecko output (-o FILE.gecko.json) through the Firefox
 * Profiler's own import path, as "Load a profile from file" / from-url does:
 * bytes -> unserializeProfileOfArbitraryFormat (gecko upgraders + processGeckoProfile
 * + processed upgraders) -> viewProfile (track computation, hidden idle tracks)
 * -> per-thread selectors (call tree, markers and their labels).
 *
 * Run by tests/viewers.sh (copied into a Firefox Profiler checkout's src/test/unit/):
 *   PYEBPF_GECKO=a.gecko.json,b.gecko.json LC_ALL=C TZ=UTC NODE_ENV=test JEST_PROJECTS=browser \
 *       npx jest src/test/unit/pyebpf-gecko.test.ts
 * Prints a JSON summary per file on stdout (PYEBPF_GECKO_OUT=FILE writes it there).
 */
import * as fs from 'fs';

import { unserializeProfileOfArbitraryFormat } from '../../profile-logic/process-profile';
import { storeWithProfile } from '../fixtures/stores';
import { getThreadSelectors } from '../../selectors/per-thread';
import {
  getGlobalTracks,
  getLocalTracksByPid,
  getGlobalTrackNames,
  getLocalTrackNamesByPid,
  getCategories,
  getMeta,
} from '../../selectors/profile';
import {
  getHiddenGlobalTracks,
  getHiddenLocalTracksByPid,
  getSelectedThreadIndexes,
} from '../../selectors/url-state';
import { formatTree } from '../fixtures/utils';

const files = (process.env.PYEBPF_GECKO || '').split(',').filter(Boolean);

describe('pyebpf gecko output', function () {
  if (files.length === 0) {
    it('needs PYEBPF_GECKO=FILE[,FILE...]', function () {});
    return;
  }
  for (const file of files) {
    it(`loads ${file}`, async function () {
      const warnings: string[] = [];
      const origWarn = console.warn;
      const origError = console.error;
      const origLog = console.log;
      jest.spyOn(console, 'warn').mockImplementation((...args) => {
        warnings.push('warn: ' + args.map(String).join(' '));
      });
      jest.spyOn(console, 'error').mockImplementation((...args) => {
        warnings.push('error: ' + args.map(String).join(' '));
      });
      const bytes = new Uint8Array(fs.readFileSync(file));
      const upgradeInfo: any = {};
      const profile = await unserializeProfileOfArbitraryFormat(
        bytes,
        'file://' + file,
        upgradeInfo
      );
      const store = storeWithProfile(profile);
      const state = store.getState();
      const meta = getMeta(state);
      const summary: any = {
        file,
        upgradeInfo,
        meta: {
          product: meta.product,
          interval: meta.interval,
          startTime: meta.startTime,
          profilingStartTime: meta.profilingStartTime,
          profilingEndTime: meta.profilingEndTime,
          symbolicated: meta.symbolicated,
          preprocessedProfileVersion: meta.preprocessedProfileVersion,
          version: meta.version,
          markerSchema: meta.markerSchema.map((s) => s.name),
          sampleUnits: meta.sampleUnits,
        },
        categories: getCategories(state).map((c) => c.name + ':' + c.color),
        globalTracks: getGlobalTrackNames(state),
        hiddenGlobalTracks: [...getHiddenGlobalTracks(state)],
        localTracksByPid: Object.fromEntries(
          [...getLocalTrackNamesByPid(state)].map(([pid, names]) => [
            pid,
            names,
          ])
        ),
        hiddenLocalTracksByPid: Object.fromEntries(
          [...getHiddenLocalTracksByPid(state)].map(([pid, set]) => [
            pid,
            [...set],
          ])
        ),
        globalTrackTypes: getGlobalTracks(state).map((t) => t.type),
        localTrackTypes: Object.fromEntries(
          [...getLocalTracksByPid(state)].map(([pid, ts]) => [
            pid,
            ts.map((t) => t.type),
          ])
        ),
        selectedThreads: [...getSelectedThreadIndexes(state)],
        threads: [],
        warnings,
        sources: Array.from({ length: profile.shared.sources.length }, (_, i) =>
          profile.shared.stringArray[profile.shared.sources.filename[i]]
        ),
        funcs: Array.from({ length: Math.min(profile.shared.funcTable.length, 60) }, (_, i) => {
          const f = profile.shared.funcTable;
          return `${profile.shared.stringArray[f.name[i]]} isJS=${f.isJS[i]} relevantForJS=${f.relevantForJS[i]} source=${f.source[i]} line=${f.lineNumber[i]} resource=${f.resource[i]}`;
        }),
        frameLines: Array.from({ length: Math.min(profile.shared.frameTable.length, 40) }, (_, i) => profile.shared.frameTable.line[i]),
      };
      profile.threads.forEach((thread, threadIndex) => {
        const sel = getThreadSelectors(threadIndex);
        const catCount: Record<string, number> = {};
        const categories = profile.meta.categories || [];
        const { stackTable, frameTable } = profile.shared;
        for (const s of thread.samples.stack) {
          // The leaf frame's category (what the activity graph colours).
          const c = s === null ? null : frameTable.category[stackTable.frame[s]];
          const name =
            s === null ? '(null stack)' : c === null ? '(inherited)' : categories[c].name;
          catCount[name] = (catCount[name] || 0) + 1;
        }
        const markers = sel.getFullMarkerList(state);
        const tooltip = sel.getMarkerTooltipLabelGetter(state);
        const table = sel.getMarkerTableLabelGetter(state);
        const chart = sel.getMarkerChartLabelGetter(state);
        const markerSummary: Record<string, number> = {};
        markers.forEach((m, i) => {
          const k = `${m.name} [${m.data ? (m.data as any).type : 'no data'}] tooltip="${tooltip(i)}" table="${table(i)}" chart="${chart(i)}"`;
          markerSummary[k] = (markerSummary[k] || 0) + 1;
        });
        const callTree = sel.getCallTree(state);
        const tree = formatTree(callTree);
        summary.threads.push({
          index: threadIndex,
          name: thread.name,
          processName: thread.processName,
          processType: thread.processType,
          pid: thread.pid,
          tid: thread.tid,
          isMainThread: thread.isMainThread,
          registerTime: thread.registerTime,
          unregisterTime: thread.unregisterTime,
          processStartupTime: thread.processStartupTime,
          samples: thread.samples.length,
          // What the sidebar's "Traced running time" adds up to (ms), against
          // samples x interval: the profiler gives each sample the time to the next.
          tracedTotalMs: (() => { const t: any = sel.getTracedTiming(state); return t === null ? 'null' : t.timings.rootTotalSummary; })(),
          samplesTimesIntervalMs: thread.samples.length * meta.interval,
          firstSampleTime: thread.samples.time
            ? thread.samples.time[0]
            : undefined,
          lastSampleTime: thread.samples.time
            ? thread.samples.time[thread.samples.length - 1]
            : undefined,
          sampleCategories: catCount,
          markers: thread.markers.length,
          derivedMarkers: markers.length,
          markerKinds: markerSummary,
          callTreeTop: tree.slice(0, 25),
        });
      });
      const text = JSON.stringify(summary, null, 1);
      if (process.env.PYEBPF_GECKO_OUT) {
        fs.appendFileSync(process.env.PYEBPF_GECKO_OUT, text + '\n');
      }
      console.warn = origWarn;
      console.error = origError;
      origLog(text);
      expect(profile.threads.length).toBeGreaterThan(0);
    });
  }
});
