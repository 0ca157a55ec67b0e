import { SectionHeader } from '../components.js';

export default function Section(_props: { id?: string }) {
  return <SectionHeader title="Tables" />;
}
