import { GpusView } from "@/components/GpusView";

export default function GpusPage() {
  return <GpusView />;
}
