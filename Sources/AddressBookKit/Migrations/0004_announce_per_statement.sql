-- One announcement per statement: now the library's.
--
-- This migration carried SQL of the `live` schema (change announcements) until the library took
-- it over: `LiveSchema.install` installs and upgrades it now, and `AddressBook.migrate` runs it
-- before these migrations. The version stays, empty, so that databases that applied the old SQL
-- keep their history (`AddressBook.migrate` accepts the old file's checksum for it).

-- migrate:up
SELECT 1;

-- migrate:down
SELECT 1;
