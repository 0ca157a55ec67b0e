// The designer's preview: the feature's draft (or the code in the editor) in the same sandboxed frame
// the application page uses, with the application's theme and the signed-in user.
import { useEffect, useRef, useState } from 'react';
import { mountFeatureFrame } from '../shared/frame-host.js';
import { TABLE_ACCESS_FIELDS, type FrameTableAccess } from '../shared/frame-protocol.js';
import { errorMessage, useDesigner } from './api.js';
import { ErrorText, Loading } from './components.js';

const PREVIEW = `query Preview($id: ID!, $code: String) { featurePreview(_id: $id, customCode: $code) { _id name script } appPage { cssVariables user { _id email name roleName } } me { ${TABLE_ACCESS_FIELDS} } }`;

interface PreviewAnswer {
  featurePreview: { _id: string; name: string; script: string };
  appPage: { cssVariables: Record<string, string>; user: { _id: string; email: string; name: string; roleName: string } };
  me: { tableAccess: FrameTableAccess[] };
}

export function FeaturePreview({ featureId, code }: { featureId: string; code: string }) {
  const { run } = useDesigner();
  const host = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  useEffect(() => {
    let frame: { destroy(): void } | undefined;
    let live = true;
    setLoading(true);
    setError(null);
    run<PreviewAnswer>(PREVIEW, { id: featureId, code })
      .then(({ featurePreview, appPage, me }) => {
        if (!live || !host.current) return;
        setLoading(false);
        frame = mountFeatureFrame(host.current, {
          featureId: featurePreview._id,
          feature: { title: `Preview of ${featurePreview.name}`, script: featurePreview.script, user: { ...appPage.user, tableAccess: me.tableAccess }, cssVariables: appPage.cssVariables },
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
  }, [featureId, code, run]);
  return (
    <section aria-label="Preview">
      {loading ? <Loading what="Compiling the preview…" /> : null}
      <ErrorText error={error} />
      <div className="preview" ref={host} />
    </section>
  );
}
