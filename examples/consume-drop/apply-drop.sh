#!/usr/bin/env bash
# Applies a freight-sync CSV drop to PostgreSQL: every COMPLETE batch (one with a manifest), oldest
# first, each exactly once, each in one transaction. Safe to run as often as you like (cron).
#   usage: apply-drop.sh DROP_DIR        connection: the usual PGHOST, PGDATABASE, PGUSER, … variables
# Needs psql, jq and sha256sum; the drop in the default format (utf8, comma, header, marker: manifest).
# Tables are created on first sight with text columns named as in the files (give them real types
# once created). A stream's root table has a one-column key (`key` in the manifest: `record_key`
# in the default mappings) that its child tables carry under the same name.
set -euo pipefail
drop=${1:?usage: apply-drop.sh DROP_DIR}
sql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
sql -c 'create table if not exists drop_batches (batch text primary key, applied_at timestamptz not null default now());
        create table if not exists drop_tables (name text primary key, root text not null, root_key text not null)'

for manifest in $(ls "$drop" | grep -E '^[0-9]{8}T[0-9]{6}Z-[0-9]+\.manifest\.json$' | sort); do
  batch=${manifest%.manifest.json}
  [ -n "$(sql -tA -c "select 1 from drop_batches where batch = '$batch'")" ] && continue
  # Every file whole and unchanged, or stop: the next run retries this batch.
  jq -r '.files[] | "\(.sha256)  \(.file)"' "$drop/$manifest" | (cd "$drop" && sha256sum --check --quiet)
  {
    echo 'begin;'
    # Root tables first (with their key column): their winning rows decide what child tables hold.
    jq -r '.files as $all | .files | sort_by(.table != .root) | .[] | . as $f
           | [.file, .table, .root, ($all[] | select(.table == $f.root) | .key[0])] | @tsv' "$drop/$manifest" |
      while IFS=$'\t' read -r file table root key; do
        columns=$(head -n 1 "$drop/$file" | tr -d '\r"')
        cat <<SQL
create table if not exists "$table" ($(echo "$columns" | sed 's/,/ text, /g') text);
insert into drop_tables values ('$table', '$root', '$key') on conflict do nothing;
create temp table "stage_$table" (like "$table") on commit drop;
\copy "stage_$table" ($columns) from '$drop/$file' with (format csv, header true)
SQL
        if [ "$table" = "$root" ]; then
          # Per key, the last delivery in this batch — unless the table already holds a newer
          # version. A tombstone (_op = delete) stays as a row, as in the SQL sink.
          cat <<SQL
create temp table "won_$table" on commit drop as
  select distinct on ("$key") * from "stage_$table" order by "$key", _synced_at::timestamptz desc;
delete from "won_$table" w using "$table" t where t."$key" = w."$key" and t._updated_at::timestamptz > w._updated_at::timestamptz;
delete from "$table" t using "won_$table" w where t."$key" = w."$key";
insert into "$table" select * from "won_$table";
do \$\$ declare child text; begin
  -- Children of every winning key are replaced, also in child tables without a file in this batch.
  for child in select name from drop_tables where root = '$table' and name <> root loop
    execute format('delete from %I c using %I w where c.%I = w.%I', child, 'won_$table', '$key', '$key');
  end loop;
end \$\$;
SQL
        else
          # Child rows belong to the root version delivered with them (same _synced_at).
          echo "insert into \"$table\" select s.* from \"stage_$table\" s join \"won_$root\" w on w.\"$key\" = s.\"$key\" and w._synced_at = s._synced_at;"
        fi
      done
    echo "insert into drop_batches (batch) values ('$batch');"
    echo 'commit;'
  } | sql
  echo "applied $batch"
done
