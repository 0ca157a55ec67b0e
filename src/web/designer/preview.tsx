// The designer's preview: the feature's draft (or the code in the editor) in the same sandboxed frame
// the application page uses, with the application's theme and the signed-in user. It runs on scratch
// data by default (each write is checked by the server, then rolled back) or, when chosen, on the
// real records; it takes the parameters the page would be opened with, and lists the errors the
// page does not catch.
import { useEffect, useId, useRef, useState } from 'react';
import { mountFeatureFrame } from '../shared/frame-host.js';
import type { PreviewQuery } from '../graphql-operations.js';
import { stringRecordOf } from '../shared/graphql.js';
import { featureQuery, TABLE_ACCESS_FIELDS, type FeatureParams } from '../shared/frame-protocol.js';
import { errorMessage, useDesigner } from './api.js';
import { ErrorText, Loading } from './components.js';

const PREVIEW = `query Preview($id: ID!, $code: String) { featurePreview(_id: $id, customCode: $code) { _id name script } appPage { cssVariables user { _id email name roleName } } me { ${TABLE_ACCESS_FIELDS} } }`;

export type PreviewData = 'scratch' | 'real';

/** At most this many of the page's errors are listed (the newest). */
const SHOWN_ERRORS = 5;

/** `order=12&tab=items` (a leading `?` allowed) as { order: '12', tab: 'items' }. */
function paramsFrom(text: string): FeatureParams {
  return Object.fromEntries(new URLSearchParams(text.trim().replace(/^\?/, '')));
}

export function FeaturePreview({ featureId, code }: { featureId: string; code: string }) {
  const { run } = useDesigner();
  const host = useRef<HTMLDivElement>(null);
  const [data, setData] = useState<PreviewData>('scratch');
  const [paramText, setParamText] = useState('');
  const [params, setParams] = useState<FeatureParams>({});
  const [error, setError] = useState<string | null>(null);
  const [pageErrors, setPageErrors] = useState<string[]>([]);
  const [opened, setOpened] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const radioName = useId();

  useEffect(() => {
    let frame: { destroy(): void } | undefined;
    let live = true;
    setLoading(true);
    setError(null);
    setPageErrors([]);
    setOpened(null);
    const report = (message: string) => live && setPageErrors((previous) => [...previous.slice(1 - SHOWN_ERRORS), message]);
    run<PreviewQuery>(PREVIEW, { id: featureId, code })
      .then(({ featurePreview, appPage, me }) => {
        if (!live || !host.current) return;
        setLoading(false);
        frame = mountFeatureFrame(host.current, {
          featureId: featurePreview._id,
          params,
          scratch: data === 'scratch',
          feature: { title: `Preview of ${featurePreview.name}`, script: featurePreview.script, user: { ...appPage.user, tableAccess: me.tableAccess }, cssVariables: stringRecordOf(appPage.cssVariables) },
          onFailed: report,
          onError: report,
          onNavigate: (target, targetParams) => live && setOpened(`/app/feature/${encodeURIComponent(target)}${featureQuery(targetParams)}`),
        });
      })
      .catch((failure) => {
        if (!live) return;
        setLoading(false);
        setError(errorMessage(failure));
      });
    return () => {
      live = false;
      frame?.destroy();
    };
  }, [featureId, code, run, data, params]);

  return (
    <section aria-label="Preview" className="preview-panel">
      <div className="preview-controls">
        <fieldset className="preview-data">
          <legend>Data of the preview</legend>
          <label>
            <input type="radio" name={radioName} value="scratch" checked={data === 'scratch'} onChange={() => setData('scratch')} /> Scratch: changes are thrown away
          </label>
          <label>
            <input type="radio" name={radioName} value="real" checked={data === 'real'} onChange={() => setData('real')} /> Real records: changes are saved
          </label>
        </fieldset>
        <form
          className="row"
          onSubmit={(event) => {
            event.preventDefault();
            setParams(paramsFrom(paramText));
          }}
        >
          <label className="field">
            <span>Parameters (as after ? in the address)</span>
            <input value={paramText} onChange={(event) => setParamText(event.target.value)} placeholder="order=123" />
          </label>
          <button type="submit">Open with these parameters</button>
        </form>
      </div>
      {data === 'real' ? (
        <p className="preview-notice real">
          <strong>Real data.</strong> What this preview creates, changes or deletes is saved in the application's records, as on /app.
        </p>
      ) : (
        <p className="preview-notice">
          <strong>Scratch data.</strong> The page reads the real records; each change it makes is checked (fields, access rules, beforeSave hooks) and then thrown away, so a list will not show it.
        </p>
      )}
      {pageErrors.length ? (
        <div className="preview-errors" role="alert">
          <strong>The page hit {pageErrors.length === 1 ? 'an error' : `${pageErrors.length} errors`}</strong>
          <ul>
            {pageErrors.map((message, index) => (
              <li key={index}>{message}</li>
            ))}
          </ul>
          <button type="button" onClick={() => setPageErrors([])}>
            Dismiss
          </button>
        </div>
      ) : null}
      {opened ? (
        <p className="preview-notice" role="status">
          The page asked to open <code>{opened}</code>: on the application page that page opens (if the user's role sees it); the preview stays here.
        </p>
      ) : null}
      {loading ? <Loading what="Compiling the preview…" /> : null}
      <ErrorText error={error} />
      <div className="preview" ref={host} />
    </section>
  );
}
