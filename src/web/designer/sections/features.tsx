// Features: list with search, the JSX editor with the validator's findings inline and the authoring
// guide beside it (its completions too), draft and published, versions with their diff, restore,
// and a preview of the code in the editor on scratch or real data.
import { Suspense, useCallback, useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { errorMessage, fieldErrors, useDesigner, useLoad } from '../api.js';
import type { CreateFeatureMutation, FeatureGuideQuery, FeatureQuery, FeatureVersionDiffQuery, FeatureVersionsQuery, FeaturesQuery, UpdateFeatureCodeMutation, UpdateFeatureMutation, ValidateFeatureCodeQuery } from '../../graphql-operations.js';
import { CodePlaceholder, ConfirmButton, ErrorText, Findings, formatTime, ItemList, Loading, SectionHeader, SelectField, TextField, useDisclosure } from '../components.js';
import type { CodeFindings } from '../components.js';
import { FEATURE_GUIDE_QUERY, FeatureGuide, guideFrom, useGuideIsDrawer } from '../feature-guide.js';
import { LoadBoundary, retryableLazy } from '../recovery.js';
import { forgetUnsaved, navigate, useUnsavedChanges } from '../routes.js';
import { FeaturePreview } from '../preview.js';

type FeatureSummary = FeaturesQuery['features'][number];
type Version = FeatureVersionsQuery['featureVersions'][number];

const CodeEditor = retryableLazy(() => import('../editor.js'));

const FEATURE_FIELDS = '_id name description customCode status version publishedVersion updatedAt';
const STARTER = `import { Card, Heading, Text } from '@trellis/ui';

export default function Page() {
  return (
    <Card>
      <Heading>New page</Heading>
      <Text>Write the page here.</Text>
    </Card>
  );
}
`;

export default function FeaturesSection({ id }: { id?: string }) {
  const { run, permissions } = useDesigner();
  const [search, setSearch] = useState('');
  const list = useLoad(() => run<FeaturesQuery>(`query Features($q: String) { features(query: $q) { _id name status version publishedVersion } }`, { q: search || null }), [search]);
  const canWrite = permissions.has('features:write');
  return (
    <>
      <SectionHeader title="Features">{canWrite ? <NewFeature onCreated={(created) => (list.reload(), navigate('features', created))} /> : null}</SectionHeader>
      <div className="split features-split">
        <div className="stack">
          <label className="field">
            <span>Search features</span>
            <input type="search" value={search} onChange={(event) => setSearch(event.target.value)} />
          </label>
          <ErrorText error={list.error} onRetry={list.reload} />
          <ItemList label="Features" section="features" items={list.data?.features} current={id} failed={!!list.error} empty={search ? 'No feature matches.' : 'No feature yet.'}>
            {(feature) => (
              <>
                {feature.name} <StatusPill feature={feature} />
                <small>{feature._id}</small>
              </>
            )}
          </ItemList>
        </div>
        {id ? <FeatureEditor key={id} id={id} onChanged={list.reload} /> : <p className="muted">Choose a feature, or create one.</p>}
      </div>
    </>
  );
}

function StatusPill({ feature }: { feature: FeatureSummary }) {
  return feature.publishedVersion !== null ? (
    <span className="pill published">published v{feature.publishedVersion}</span>
  ) : (
    <span className="pill draft">draft</span>
  );
}

function NewFeature({ onCreated }: { onCreated: (id: string) => void }) {
  const { run } = useDesigner();
  const { open, setOpen, opener, closeOnEscape } = useDisclosure();
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  if (!open) {
    return (
      <button type="button" className="primary" ref={opener} onClick={() => setOpen(true)}>
        New feature
      </button>
    );
  }
  async function create(event: FormEvent) {
    event.preventDefault();
    try {
      const { createFeature } = await run<CreateFeatureMutation>(`mutation CreateFeature($name: String!, $code: String!) { createFeature(name: $name, customCode: $code) { _id } }`, { name, code: STARTER });
      setOpen(false);
      setName('');
      onCreated(createFeature._id);
    } catch (failure) {
      setError(errorMessage(failure));
    }
  }
  return (
    <form className="row" onSubmit={create} onKeyDown={closeOnEscape} aria-label="New feature">
      <TextField label="Name of the new feature" value={name} onChange={setName} required autoFocus />
      <button type="submit" className="primary">
        Create
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
      <ErrorText error={error} />
    </form>
  );
}

function FeatureEditor({ id, onChanged }: { id: string; onChanged: () => void }) {
  const { run, permissions, toast } = useDesigner();
  const loaded = useLoad(() => run<FeatureQuery>(`query Feature($id: ID!) { feature(_id: $id) { ${FEATURE_FIELDS} } }`, { id }), [id]);
  const [draft, setDraft] = useState<{ name: string; description: string; code: string } | null>(null);
  const [findings, setFindings] = useState<CodeFindings | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [saving, setSaving] = useState(false);
  const [previewCode, setPreviewCode] = useState<string | null>(null);
  const [versionsTick, setVersionsTick] = useState(0);
  const guide = useLoad(() => run<FeatureGuideQuery>(FEATURE_GUIDE_QUERY).then(guideFrom), []);
  const drawer = useGuideIsDrawer();
  const [guideOpen, setGuideOpen] = useState(() => !drawer);
  const guideId = useId();
  const guideToggle = useRef<HTMLButtonElement>(null);
  // A drawer that closes gives the focus back to the button that opened it.
  const closeGuide = useCallback(() => {
    setGuideOpen(false);
    if (drawer) guideToggle.current?.focus();
  }, [drawer]);
  const feature = loaded.data?.feature;
  const [editorReady, setEditorReady] = useState(false);
  const unsaved = !!draft && !!feature && (draft.code !== feature.customCode || draft.name !== feature.name || draft.description !== feature.description);
  useUnsavedChanges(unsaved, `the feature ${feature?.name ?? id}`);

  useEffect(() => {
    if (feature && !draft) setDraft({ name: feature.name, description: feature.description, code: feature.customCode });
  }, [feature, draft]);

  const validate = useCallback(
    async (code: string) => {
      const { validateFeatureCode } = await run<Omit<ValidateFeatureCodeQuery, 'validateFeatureCode'> & { validateFeatureCode: CodeFindings }>(`query ValidateFeatureCode($code: String!) { validateFeatureCode(customCode: $code) { errors warnings } }`, { code });
      setFindings(validateFeatureCode);
      return validateFeatureCode;
    },
    [run],
  );

  if (loaded.error) return <ErrorText error={loaded.error} onRetry={loaded.reload} />;
  if (!loaded.data) return <Loading />;
  if (!feature) return <p role="alert">The feature '{id}' does not exist.</p>;
  if (!draft) return <Loading />;
  const canWrite = permissions.has('features:write');

  async function save(status: 'draft' | 'published') {
    if (!draft || !feature) return;
    setSaving(true);
    setError(null);
    setErrors({});
    try {
      const { updateFeature } = await run<UpdateFeatureMutation>(
        `mutation UpdateFeature($id: ID!, $name: String, $description: String, $code: String, $status: FeatureStatus) { updateFeature(_id: $id, name: $name, description: $description, customCode: $code, status: $status) { ${FEATURE_FIELDS} } }`,
        { id: feature._id, name: draft.name, description: draft.description, code: draft.code, status },
      );
      loaded.reload();
      setDraft({ name: updateFeature.name, description: updateFeature.description, code: updateFeature.customCode });
      setVersionsTick((t) => t + 1);
      onChanged();
      toast(status === 'published' ? `Published version ${updateFeature.publishedVersion}` : `Saved version ${updateFeature.version} as a draft`);
    } catch (failure) {
      setError(errorMessage(failure));
      setErrors(fieldErrors(failure));
    } finally {
      setSaving(false);
    }
  }

  return (
    <article className="stack" aria-label={`Feature ${feature.name}`}>
      <div className="row">
        <h2 style={{ margin: 0 }}>{feature.name}</h2>
        <StatusPill feature={feature} />
        <span className="muted">
          version {feature.version} · saved {formatTime(feature.updatedAt)}
        </span>
      </div>
      <div className="grid-2">
        <TextField label="Name" value={draft.name} onChange={(name) => setDraft({ ...draft, name })} error={errors.name} disabled={!canWrite} />
        <TextField label="Description" value={draft.description} onChange={(description) => setDraft({ ...draft, description })} error={errors.description} disabled={!canWrite} />
      </div>
      <div className={guideOpen ? 'workspace with-guide' : 'workspace'}>
        <div className="workspace-code">
          <div className="row workspace-head">
            <span className="field-label" id={`code-${feature._id}`}>
              Code (JSX)
            </span>
            <button type="button" ref={guideToggle} onClick={() => setGuideOpen(!guideOpen)} aria-expanded={guideOpen} aria-controls={guideOpen ? guideId : undefined}>
              {guideOpen ? 'Hide the guide' : 'Show the guide'}
            </button>
          </div>
          <LoadBoundary what="The code editor">
            <Suspense fallback={<CodePlaceholder code={draft.code} />}>
              <CodeEditor value={draft.code} onChange={(code) => setDraft((current) => current && { ...current, code })} jsx label="Feature code" validate={validate} assist={guide.data} onReady={() => setEditorReady(true)} />
            </Suspense>
          </LoadBoundary>
          <Findings findings={findings} />
        </div>
        {guideOpen ? (
          <FeatureGuide
            id={guideId}
            guide={guide.data}
            error={guide.error}
            drawer={drawer}
            onClose={closeGuide}
            onInsert={(code, table) => {
              setDraft((current) => current && { ...current, code });
              if (drawer) closeGuide();
              toast(`Inserted a page for ${table}; Ctrl+Z undoes it`);
            }}
          />
        ) : null}
      </div>
      <ErrorText error={error} />
      <div className="row">
        {canWrite ? (
          <>
            {/* Enabled once the editor is ready: what it holds is what is saved. */}
            <button type="button" onClick={() => void save('draft')} disabled={!editorReady || saving}>
              Save draft
            </button>
            <button type="button" className="primary" onClick={() => void save('published')} disabled={!editorReady || saving || (findings?.errors.length ?? 0) > 0}>
              Publish
            </button>
          </>
        ) : (
          <span className="muted">Your role can read features but not change them.</span>
        )}
        <button type="button" onClick={() => setPreviewCode(previewCode === null ? draft.code : null)} aria-expanded={previewCode !== null}>
          {previewCode === null ? 'Preview' : 'Close preview'}
        </button>
        {previewCode !== null && previewCode !== draft.code ? (
          <button type="button" onClick={() => setPreviewCode(draft.code)}>
            Refresh preview
          </button>
        ) : null}
        {unsaved ? <span className="muted">Unsaved changes</span> : null}
        {permissions.has('config:delete') ? (
          <ConfirmButton
            label="Delete"
            disabled={!editorReady}
            question={`Delete the feature ${feature.name}?`}
            onConfirm={async () => {
              try {
                await run(`mutation DeleteFeature($id: ID!) { deleteFeature(_id: $id, confirm: true) }`, { id: feature._id });
                onChanged();
                forgetUnsaved();
                navigate('features');
              } catch (failure) {
                setError(errorMessage(failure));
              }
            }}
          />
        ) : null}
      </div>
      {previewCode !== null ? <FeaturePreview featureId={feature._id} code={previewCode} /> : null}
      <Versions
        key={versionsTick}
        featureId={feature._id}
        canRestore={canWrite}
        onRestore={async (version) => {
          try {
            const { updateFeature } = await run<UpdateFeatureCodeMutation>(`mutation UpdateFeatureCode($id: ID!, $code: String!) { updateFeature(_id: $id, customCode: $code) { ${FEATURE_FIELDS} } }`, {
              id: feature._id,
              code: version.customCode,
            });
            loaded.reload();
            setDraft({ name: updateFeature.name, description: updateFeature.description, code: updateFeature.customCode });
            setVersionsTick((t) => t + 1);
            onChanged();
            toast(`Restored version ${version.version} as version ${updateFeature.version}`);
          } catch (failure) {
            setError(errorMessage(failure));
          }
        }}
      />
    </article>
  );
}

function Versions({ featureId, canRestore, onRestore }: { featureId: string; canRestore: boolean; onRestore: (version: Version) => Promise<void> }) {
  const { run } = useDesigner();
  const versions = useLoad(() => run<FeatureVersionsQuery>(`query FeatureVersions($id: ID!) { featureVersions(_id: $id) { version status customCode createdAt authorId } }`, { id: featureId }), [featureId]);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [diff, setDiff] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const list = versions.data?.featureVersions ?? [];
  useEffect(() => {
    if (list.length >= 2 && !from) {
      setFrom(String(list[1]!.version));
      setTo(String(list[0]!.version));
    }
  }, [list, from]);
  const options = list.map((version) => ({ value: String(version.version), label: `Version ${version.version} (${version.status})` }));
  return (
    <section aria-labelledby="versions-title">
      <h3 id="versions-title">Version history</h3>
      <ErrorText error={versions.error ?? error} onRetry={versions.error ? versions.reload : undefined} />
      <div className="scroll-x" role="region" aria-label="Feature versions" tabIndex={0}>
        <table className="grid">
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Status</th>
              <th scope="col">Saved</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((version) => (
              <tr key={version.version}>
                <td data-label="Version">{version.version}</td>
                <td data-label="Status">{version.status}</td>
                <td data-label="Saved">{formatTime(version.createdAt)}</td>
                <td>
                  {canRestore ? (
                    <button type="button" onClick={() => void onRestore(version)} aria-label={`Restore version ${version.version}`}>
                      Restore
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.length >= 2 ? (
        <form
          className="row"
          aria-label="Compare versions"
          onSubmit={async (event) => {
            event.preventDefault();
            setError(null);
            try {
              const { featureVersionDiff } = await run<FeatureVersionDiffQuery>(`query FeatureVersionDiff($id: ID!, $from: Int!, $to: Int!) { featureVersionDiff(_id: $id, from: $from, to: $to) }`, {
                id: featureId,
                from: Number(from),
                to: Number(to),
              });
              setDiff(featureVersionDiff);
            } catch (failure) {
              setError(errorMessage(failure));
            }
          }}
        >
          <SelectField label="From version" value={from} onChange={setFrom} options={options} />
          <SelectField label="To version" value={to} onChange={setTo} options={options} />
          <button type="submit">Show diff</button>
        </form>
      ) : null}
      {diff !== null ? <DiffView diff={diff} /> : null}
    </section>
  );
}

export function DiffView({ diff }: { diff: string }) {
  if (!diff) return <p className="muted">The two versions have the same code.</p>;
  return (
    <pre className="diff" aria-label="Differences">
      {diff.split('\n').map((line, index) => (
        <span key={index} className={line.startsWith('+') && !line.startsWith('+++') ? 'add' : line.startsWith('-') && !line.startsWith('---') ? 'del' : undefined}>
          {line}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}
