import type { Metadata } from "next";
import { UsersView } from "@/components/auth/UsersView";

export const metadata: Metadata = { title: "Users · gpudeck" };

export default function UsersPage() {
  return <UsersView />;
}
