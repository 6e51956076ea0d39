// A LangGraph checkpointer that outlives its process: MemorySaver's storage,
// written to a JSON file after every change and read back on construction.
// It lets the restart test drop everything in memory and start again from
// the file alone, without a native SQLite module to build.

import { readFileSync, writeFileSync } from "node:fs";

import { MemorySaver } from "@langchain/langgraph";

type Stored = MemorySaver["storage"];
type Writes = MemorySaver["writes"];

const replacer = (_key: string, value: unknown) => (value instanceof Uint8Array ? { $bytes: Buffer.from(value).toString("base64") } : value);
const reviver = (_key: string, value: unknown) =>
  typeof value === "object" && value !== null && "$bytes" in value ? new Uint8Array(Buffer.from(String(value.$bytes), "base64")) : value;

export class FileSaver extends MemorySaver {
  constructor(readonly path: string) {
    super();
    try {
      const saved = JSON.parse(readFileSync(path, "utf8"), reviver) as { storage: Stored; writes: Writes };
      this.storage = saved.storage;
      this.writes = saved.writes;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
  }

  override async put(...args: Parameters<MemorySaver["put"]>) {
    const saved = await super.put(...args);
    this.#save();
    return saved;
  }

  override async putWrites(...args: Parameters<MemorySaver["putWrites"]>) {
    await super.putWrites(...args);
    this.#save();
  }

  #save() {
    writeFileSync(this.path, JSON.stringify({ storage: this.storage, writes: this.writes }, replacer));
  }
}
