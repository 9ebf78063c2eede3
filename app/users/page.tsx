import type { Metadata } from "next";
import { UsersView } from "@/components/auth/UsersView";
import { TokensSection } from "@/components/account/TokensSection";

export const metadata: Metadata = { title: "Users · gpudeck" };

export default function UsersPage() {
  return (
    <>
      <UsersView />
      <TokensSection admin />
    </>
  );
}
