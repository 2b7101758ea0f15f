/**
 * The cluster's keys, derived from the secret every sidecar of a cluster already shares
 * (`NEXTAUTH_SECRET`) with HKDF-SHA256, each under its own label, so neither key is the secret
 * itself nor usable for anything else (next-auth derives its own keys from the same secret under
 * other labels). Nothing is stored: every node derives the same keys at start.
 *
 * Owns: the labels and the derivation. Must not: know messages.
 */
import { hkdf } from "@panva/hkdf";

/** HKDF's info labels (changing one makes old and new releases refuse each other's messages). */
export const clusterKeyLabels = {
  /** HMAC-SHA256 of every command-bus message (`bus-signing.ts`). */
  busMac: "conduit cluster command-bus HMAC-SHA256 v1",
  /** AES-256-GCM of every Socket.IO adapter message (`adapter-sealing.ts`). */
  adapterSeal: "conduit cluster socket.io-adapter AES-256-GCM v1",
} as const;

const salt = "conduit.cluster";

export interface ClusterKeys {
  busMac: Buffer;
  adapterSeal: Buffer;
}

/** Both keys (32 bytes each) from the shared secret. */
export async function deriveClusterKeys(secret: string): Promise<ClusterKeys> {
  if (secret.length < 32) throw new Error("The cluster's keys need the shared secret (NEXTAUTH_SECRET, at least 32 characters).");
  const [busMac, adapterSeal] = await Promise.all([
    hkdf("sha256", secret, salt, clusterKeyLabels.busMac, 32),
    hkdf("sha256", secret, salt, clusterKeyLabels.adapterSeal, 32),
  ]);
  return { busMac: Buffer.from(busMac), adapterSeal: Buffer.from(adapterSeal) };
}
