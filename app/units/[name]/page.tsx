import { UnitView } from "@/components/UnitView";

export default async function UnitPage({ params }: { params: Promise<{ name: string }> }) {
  const { name } = await params;
  return <UnitView name={decodeURIComponent(name)} />;
}
