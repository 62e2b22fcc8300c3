//! A vendor contract's vendor schema changed (`[input] schema` names another file): what
//! the guard lets through now. The two vendor schemas are compared as any two versions
//! (the set algebra, then the structure); then every mapped pointer and every failure
//! rule's pointer is probed: an accepted fixture's vendor document with the value there
//! replaced, judged by the two **whole guards** (same contract, old and new vendor
//! schema). A witness is only a document those guards judge differently; a value only
//! the vendor schemas tell apart, which the mapping or the contract schema turns away
//! under both, is a noted compatible change.

use airlock_guard::{Contract, Guard, InputKind, Pointer, Request, VendorInput};
use serde_json::{json, Value};
use std::path::Path;

use super::values::unique;
use super::{
    candidates, compare, generate, replay, set_at, structural, Certificate, Change, Class,
    Evidence, Focus, View, Witness,
};
use crate::base::error::CheckError;
use crate::corpus::find_corpus;

/// Documents probed per pointer (bases times edits).
const MAX_PROBES: usize = 1500;

/// Compare the vendor schema `from` with `to` (default: the file `[input] schema` names
/// now) of the vendor contract in `dir`, its corpus given or found beside it.
///
/// # Errors
///
/// When the contract is not a vendor contract, either file does not load as its vendor
/// schema, or the corpus cannot be loaded.
pub fn certify_vendor(
    dir: &Path,
    from: &str,
    to: Option<&str>,
    corpus: Option<&Path>,
) -> Result<Certificate, CheckError> {
    let contract_error = |source| CheckError::Contract {
        dir: dir.to_path_buf(),
        source,
    };
    let current = Contract::load(dir).map_err(contract_error)?;
    let to = match (to, current.input()) {
        (Some(to), _) => to.to_owned(),
        (None, InputKind::Vendor(v)) => v.schema_file.clone(),
        // Let the loader say why this contract has no vendor schema.
        (None, _) => from.to_owned(),
    };
    let old = Contract::load_with_vendor_schema(dir, from).map_err(contract_error)?;
    let new = Contract::load_with_vendor_schema(dir, &to).map_err(contract_error)?;
    let corpus = find_corpus(&new, corpus).map_err(|source| CheckError::Corpus {
        dir: dir.to_path_buf(),
        source,
    })?;
    let (Some(ov), Some(nv), InputKind::Vendor(vendor)) =
        (old.vendor_schema(), new.vendor_schema(), new.input())
    else {
        // load_with_vendor_schema loads vendor contracts only.
        return Err(contract_error(airlock_guard::ContractError::Invalid {
            location: "input.kind".into(),
            reason: "not a vendor contract".into(),
        }));
    };
    let agent: Vec<String> = new
        .agent_fields()
        .iter()
        .map(|f| f.as_str().to_owned())
        .collect();
    // The vendor pointers whose values reach an agent field.
    let agent_from: Vec<String> = vendor
        .map
        .iter()
        .filter(|m| agent.contains(&format!("/data/{}", m.field)))
        .map(|m| m.from.as_str().to_owned())
        .collect();
    let mut requests: Vec<&Request> = vec![&corpus.request];
    for f in &corpus.fixtures {
        if !requests.contains(&&f.request) {
            requests.push(&f.request);
        }
    }
    let guards = Guards {
        old: Guard::new(old.clone()),
        new: Guard::new(new.clone()),
        requests,
    };
    let bases: Vec<(Value, &Request)> = corpus
        .fixtures
        .iter()
        .filter_map(|f| Some((serde_json::from_slice::<Value>(&f.bytes).ok()?, &f.request)))
        .collect();
    let mut certificate = compare(
        new.tool(),
        ov,
        nv,
        &View::fields(agent_from.clone()),
        bases.iter().map(|(v, _)| v.clone()).collect(),
    );
    let probed = probed_pointers(vendor);
    let mut changes = confirmed_changes(
        std::mem::take(&mut certificate.changes),
        &probed,
        &guards,
        &bases,
    );
    for (pointer, role) in &probed {
        changes.extend(probe_pointer(
            &guards,
            (ov, nv),
            (pointer, role),
            &bases,
            &agent_from,
        ));
    }
    certificate.changes = changes;
    certificate.from = json!({"vendor_schema": from, "sha256": ov.sha256()});
    certificate.to = json!({"vendor_schema": to, "sha256": nv.sha256()});
    certificate.add_replay(replay(&old, &new, &corpus));
    Ok(certificate)
}

/// The algebra's and the structure's changes: those at probed pointers are the probes'
/// to decide (dropped); the others keep a witness only when the whole guards confirm it.
fn confirmed_changes(
    changes: Vec<Change>,
    probed: &[(String, Role)],
    guards: &Guards<'_>,
    bases: &[(Value, &Request)],
) -> Vec<Change> {
    let under = |pointer: &str| {
        probed
            .iter()
            .any(|(p, _)| pointer == p || pointer.starts_with(&format!("{p}/")))
    };
    let mut out: Vec<Change> = Vec::new();
    for mut change in changes {
        if under(&change.pointer) {
            continue;
        }
        if let Some(w) = change.witness.take() {
            match guards.confirm(&w, &change.pointer, bases) {
                Some(confirmed) => change.witness = Some(confirmed),
                None => {
                    change.evidence = Evidence::Structural;
                    change.detail = format!(
                        "{} (the vendor schemas tell an example apart; no document the whole guards judge differently was found)",
                        change.detail
                    );
                    if change.class == Class::AgentVisible {
                        change.class = Class::Compatible;
                    }
                }
            }
        }
        out.push(change);
    }
    out
}

/// The changes at one probed pointer: none where both vendor schemas say the same there,
/// a mapped required member gone (breaking), else what the probes find.
fn probe_pointer(
    guards: &Guards<'_>,
    (ov, nv): VendorSchemas<'_>,
    (pointer, role): (&String, &Role),
    bases: &[(Value, &Request)],
    agent_from: &[String],
) -> Vec<Change> {
    let (od, nd) = (ov.document(), nv.document());
    let Ok(parsed) = Pointer::parse(pointer) else {
        return Vec::new();
    };
    let (oc, nc) = (ov.can_contain(&parsed), nv.can_contain(&parsed));
    let same =
        oc == nc && structural::conjunction(od, pointer) == structural::conjunction(nd, pointer);
    if same {
        return Vec::new();
    }
    if let Role::Mapped {
        optional: false, ..
    } = role
    {
        let declared = |d: &Value| !crate::schema::schema_at(d, pointer).is_empty();
        if oc && (!nc || (declared(od) && !declared(nd))) {
            return vec![mapped_member_gone(guards, pointer, role, bases, nc)];
        }
    }
    probe(guards, (ov, nv), pointer, role, bases, agent_from)
}

/// A required mapped member the new vendor schema no longer declares (`still_held`: an
/// open object may carry it) or cannot hold: breaking, witnessed by a base only the old
/// guard admits.
fn mapped_member_gone(
    guards: &Guards<'_>,
    pointer: &str,
    role: &Role,
    bases: &[(Value, &Request)],
    still_held: bool,
) -> Change {
    let nc = still_held;
    let witness = bases
        .iter()
        .find(|(v, r)| guards.verdicts(v, r) == (true, false))
        .map(|(v, _)| Witness {
            accepted_by: "old_only",
            instance: v.clone(),
            isolated: false,
        });
    let why = if nc {
        "the new vendor schema no longer declares it (an open object may still carry it, but the vendor no longer promises it): responses without it fail the mapping closed"
    } else {
        "the new vendor schema cannot hold it, so every success response fails the mapping closed (and a manifest naming this file does not load)"
    };
    Change {
        class: Class::Breaking,
        kind: "mapped_member_gone",
        pointer: pointer.to_owned(),
        detail: format!("{} ({pointer}): {why}", role.describe()),
        evidence: match (&witness, nc) {
            (Some(_), _) => Evidence::Witness,
            (None, false) => Evidence::Proof,
            (None, true) => Evidence::Structural,
        },
        witness,
        focus: Focus::Location,
    }
}

/// What a probed pointer is to the contract.
enum Role {
    /// The `from` of a mapping.
    Mapped {
        field: String,
        optional: bool,
        table: Vec<Value>,
        /// Mapped with `rfc3339_utc`: the probes add the time spellings at the edge of
        /// `format: date-time` (the normaliser is then the only gate).
        time: bool,
    },
    /// The `at` of a failure rule.
    Failure { equals: Option<Value>, code: String },
}

impl Role {
    fn describe(&self) -> String {
        match self {
            Role::Mapped { field, .. } => format!("the member mapped to data.{field}"),
            Role::Failure { code, .. } => format!("the failure rule's member (code {code})"),
        }
    }
}

/// Every mapped `from` and failure `at`, each once (the first role wins).
fn probed_pointers(vendor: &VendorInput) -> Vec<(String, Role)> {
    let mut out: Vec<(String, Role)> = Vec::new();
    for m in &vendor.map {
        let table = match &m.normalise {
            airlock_guard::Normalise::Table(t) => t.keys().cloned().map(Value::String).collect(),
            _ => Vec::new(),
        };
        if !out.iter().any(|(p, _)| p == m.from.as_str()) {
            out.push((
                m.from.as_str().to_owned(),
                Role::Mapped {
                    field: m.field.clone(),
                    optional: m.optional,
                    table,
                    time: matches!(m.normalise, airlock_guard::Normalise::Rfc3339Utc),
                },
            ));
        }
    }
    for rule in &vendor.failure {
        if !out.iter().any(|(p, _)| p == rule.at.as_str()) {
            out.push((
                rule.at.as_str().to_owned(),
                Role::Failure {
                    equals: rule.equals.clone(),
                    code: rule.code.as_str().to_owned(),
                },
            ));
        }
    }
    out
}

/// The two whole guards and the requests the corpus answers.
struct Guards<'a> {
    old: Guard,
    new: Guard,
    requests: Vec<&'a Request>,
}

impl Guards<'_> {
    fn verdicts(&self, doc: &Value, request: &Request) -> (bool, bool) {
        let bytes = serde_json::to_vec(doc).unwrap_or_default();
        (
            self.old.admit(request, &bytes).is_admitted(),
            self.new.admit(request, &bytes).is_admitted(),
        )
    }

    /// A request under which only the old guard (`old_only`) or only the new one admits
    /// `doc`.
    fn separates(&self, doc: &Value, old_only: bool) -> Option<&Request> {
        self.requests
            .iter()
            .copied()
            .find(|r| self.verdicts(doc, r) == (old_only, !old_only))
    }
}

impl Guards<'_> {
    /// A witness of the vendor schemas that the whole guards confirm: the instance
    /// itself, or a fixture's document with the instance's value at `pointer` (or without
    /// the member, when the instance lacks it); none when the guards never disagree in
    /// the claimed direction.
    fn confirm(&self, w: &Witness, pointer: &str, bases: &[(Value, &Request)]) -> Option<Witness> {
        let old_only = w.accepted_by == "old_only";
        if self.separates(&w.instance, old_only).is_some() {
            return Some(w.clone());
        }
        let value = w.instance.pointer(pointer).cloned();
        let mut fallback = None;
        for (base, request) in bases {
            let mut doc = base.clone();
            if !set_at(&mut doc, pointer, value.clone()) {
                continue;
            }
            if self.verdicts(&doc, request) != (old_only, !old_only) {
                continue;
            }
            let before = self.verdicts(base, request);
            let found = Witness {
                accepted_by: w.accepted_by,
                instance: doc,
                isolated: before.0 == before.1,
            };
            if found.isolated {
                return Some(found);
            }
            fallback.get_or_insert(found);
        }
        fallback
    }
}

/// The two vendor schemas.
type VendorSchemas<'a> = (
    &'a airlock_guard::CompiledSchema,
    &'a airlock_guard::CompiledSchema,
);

/// The changes at one probed pointer: every class the whole guards confirm (one witness
/// each), or a noted compatible change when only the vendor schemas tell values apart.
fn probe(
    guards: &Guards<'_>,
    (ov, nv): VendorSchemas<'_>,
    pointer: &str,
    role: &Role,
    bases: &[(Value, &Request)],
    agent_from: &[String],
) -> Vec<Change> {
    let edits = probe_edits((ov, nv), pointer, role);
    let mut found: Vec<Change> = Vec::new();
    let mut noted: Option<(Value, String)> = None;
    let mut probes = 0;
    'bases: for (base, request) in bases {
        let base_edits = edits_of_base(&edits, role, base, pointer);
        let Some(tried) = tried_documents(
            guards,
            (ov, nv),
            (base, request),
            pointer,
            &base_edits,
            &mut probes,
        ) else {
            continue;
        };
        for (doc, edit) in tried {
            probes += 1;
            if probes > MAX_PROBES {
                break 'bases;
            }
            let vendor = (ov.is_valid(&doc), nv.is_valid(&doc));
            let bytes = serde_json::to_vec(&doc).unwrap_or_default();
            let (a, b) = (
                guards.old.admit(request, &bytes),
                guards.new.admit(request, &bytes),
            );
            let shown = edit.as_ref().map_or_else(|| "no value".to_owned(), short);
            if a.is_admitted() == b.is_admitted() {
                if vendor.0 != vendor.1 && noted.is_none() {
                    let note = vendor_only_note(
                        (&a, &b),
                        vendor.1,
                        (&shown, pointer),
                        role,
                        edit.as_ref(),
                    );
                    noted = Some((doc.clone(), note));
                }
                continue;
            }
            let (class, kind, detail) = disagreement(role, &a, &b, (&shown, pointer), agent_from);
            if found.iter().all(|c| c.class != class) {
                found.push(Change {
                    class,
                    kind,
                    pointer: pointer.to_owned(),
                    detail,
                    evidence: Evidence::Witness,
                    witness: Some(Witness {
                        accepted_by: if a.is_admitted() {
                            "old_only"
                        } else {
                            "new_only"
                        },
                        instance: doc,
                        isolated: true,
                    }),
                    focus: Focus::Location,
                });
            }
        }
    }
    if found.is_empty() {
        found.push(unconfirmed(pointer, role, noted));
    }
    found
}

/// The edits tried at `pointer` (none, the member removed, first): the table's keys and
/// the failure rule's value first, then what each version's schema there suggests, then
/// one value of each type, each once.
fn probe_edits((ov, nv): VendorSchemas<'_>, pointer: &str, role: &Role) -> Vec<Option<Value>> {
    let (od, nd) = (ov.document(), nv.document());
    let (o, n) = (
        structural::conjunction(od, pointer),
        structural::conjunction(nd, pointer),
    );
    let mut values: Vec<Value> = match role {
        Role::Mapped { table, .. } => table.clone(),
        Role::Failure { equals, .. } => equals.iter().cloned().collect(),
    };
    for (root, side) in [(od, &o), (nd, &n)] {
        for s in side.iter() {
            values.extend(generate::candidates(root, s, 7));
        }
    }
    values.extend(candidates(&o, &n));
    std::iter::once(None)
        .chain(unique(values).into_iter().map(Some))
        .collect()
}

/// The edits of one base: the probe's, and for a time mapped with `rfc3339_utc` the
/// spellings of the base's own time at the edge of `format: date-time`.
fn edits_of_base(
    edits: &[Option<Value>],
    role: &Role,
    base: &Value,
    pointer: &str,
) -> Vec<Option<Value>> {
    let mut base_edits = edits.to_vec();
    if let Role::Mapped { time: true, .. } = role {
        for v in time_spellings(base.pointer(pointer)) {
            if !base_edits.contains(&Some(v.clone())) {
                base_edits.push(Some(v));
            }
        }
    }
    base_edits
}

/// The documents judged for one base (each with the edit that made it), `None` when the
/// base is skipped. A base both guards judge alike is edited: the edit is what flips a
/// verdict. A base they already judge differently is a witness here only when an edit at
/// this pointer makes both admit it: then its own value there is the cause.
fn tried_documents(
    guards: &Guards<'_>,
    (ov, nv): VendorSchemas<'_>,
    (base, request): (&Value, &Request),
    pointer: &str,
    base_edits: &[Option<Value>],
    probes: &mut usize,
) -> Option<Vec<(Value, Option<Value>)>> {
    let before = guards.verdicts(base, request);
    let edited = |edit: &Option<Value>| {
        let mut doc = base.clone();
        set_at(&mut doc, pointer, edit.clone()).then_some(doc)
    };
    if before.0 == before.1 {
        return Some(
            base_edits
                .iter()
                .filter_map(|edit| Some((edited(edit)?, edit.clone())))
                .collect(),
        );
    }
    // The vendor schema that refuses this base: when an edit here alone makes it
    // accept the base, the base's own value here is the cause (a type changed
    // under a mapped member or a failure rule's member), whatever the mapping
    // then makes of the edit.
    let refusing = if before.0 { nv } else { ov };
    let implicated = !refusing.is_valid(base)
        && base_edits.iter().any(|edit| {
            *probes += 1;
            edited(edit).is_some_and(|doc| {
                refusing.is_valid(&doc) || guards.verdicts(&doc, request) == (true, true)
            })
        });
    if !implicated {
        return None;
    }
    // The base, then edits here that the guards judge the other way round (a
    // failure shape the new vendor schema holds and the old one refused).
    let mut tried = vec![(base.clone(), base.pointer(pointer).cloned())];
    for edit in base_edits {
        *probes += 1;
        if let Some(doc) = edited(edit) {
            if guards.verdicts(&doc, request) == (before.1, before.0) {
                tried.push((doc, edit.clone()));
            }
        }
    }
    Some(tried)
}

/// The note of a value only the vendor schemas tell apart (`newly_admitted` by the new
/// one, else newly rejected): which guard stage still turns it away.
fn vendor_only_note(
    (a, b): (&airlock_guard::Admission, &airlock_guard::Admission),
    newly_admitted: bool,
    (shown, pointer): (&str, &str),
    role: &Role,
    edit: Option<&Value>,
) -> String {
    let admission = if newly_admitted { b } else { a };
    let why = admission.diagnostic().map_or_else(
        || "rejects it".to_owned(),
        |d| format!("rejects it at {} ({})", d.stage().as_str(), d.keyword()),
    );
    if newly_admitted {
        format!(
            "{shown} at {pointer} is newly admitted by the vendor schema, but the guard still {why}{}: no response it admitted changes",
            table_note(role, edit)
        )
    } else {
        format!(
            "{shown} at {pointer} is newly rejected by the vendor schema, but the old guard already {why}: no response it admitted changes"
        )
    }
}

/// What the guards' disagreement on a document means: newly rejected (breaking), a
/// failure code now forwarded, a mapped value reaching the agent, or one that does not.
fn disagreement(
    role: &Role,
    a: &airlock_guard::Admission,
    b: &airlock_guard::Admission,
    (shown, pointer): (&str, &str),
    agent_from: &[String],
) -> (Class, &'static str, String) {
    if a.is_admitted() {
        (
            Class::Breaking,
            match role {
                Role::Mapped { .. } => "mapped_value_newly_rejected",
                Role::Failure { .. } => "failure_shape_newly_rejected",
            },
            format!(
                "{} holding {shown}: a response the old guard admitted is rejected now",
                role.describe()
            ),
        )
    } else if !b.agent().is_success() {
        (
            Class::AgentVisible,
            "failure_shape_newly_admitted",
            format!(
                "{} holding {shown}: the guard now forwards a failure code where it answered INVALID_RESPONSE",
                role.describe()
            ),
        )
    } else if agent_from.iter().any(|p| p == pointer) {
        (
            Class::AgentVisible,
            "mapped_value_newly_admitted",
            format!(
                "{} holding {shown}: it normalises and passes the contract, and reaches the agent",
                role.describe()
            ),
        )
    } else {
        (
            Class::Compatible,
            "mapped_value_newly_admitted",
            format!(
                "{} holding {shown}: admitted now, but data's member is not an agent field",
                role.describe()
            ),
        )
    }
}

/// The compatible change of a pointer no probe made the guards disagree on: the note of
/// a value only the vendor schemas tell apart, if one was seen.
fn unconfirmed(pointer: &str, role: &Role, noted: Option<(Value, String)>) -> Change {
    let mut detail = match noted {
        Some((_, note)) => note,
        None => format!(
            "{} changed in the vendor schema; no probe made the guards disagree",
            role.describe()
        ),
    };
    if let Role::Mapped { time: true, .. } = role {
        detail.push_str(
            " (the fixtures' times were also probed in the spellings at the edge of \
             `format: date-time` — lower-case t/z, a space, a leap second, ten fraction \
             digits, a comma fraction, offsets without a colon or minutes, no offset — \
             and rfc3339_utc refuses every one the guards disagree on)",
        );
    }
    Change {
        class: Class::Compatible,
        kind: "vendor_value_changed",
        pointer: pointer.to_owned(),
        detail,
        evidence: Evidence::Structural,
        witness: None,
        focus: Focus::Location,
    }
}

/// Spellings of the time `value` (a string) that `format: date-time` may tell apart from
/// what `rfc3339_utc` normalises: lower-case `t`/`z`, a space for `T`, a leap second, a
/// ten-digit fraction, ISO 8601's offsets without a colon or minutes, a comma fraction.
/// Derived from the fixture's own time, so a freshness check still passes them.
fn time_spellings(value: Option<&Value>) -> Vec<Value> {
    // ASCII only: the spellings are cut at byte offsets (a hostile fixture's multi-byte
    // character there would split).
    let Some(text) = value.and_then(Value::as_str).filter(|t| t.is_ascii()) else {
        return Vec::new();
    };
    let (Some(date), Some(rest)) = (text.get(..10), text.get(11..)) else {
        return Vec::new();
    };
    let Some(clock) = rest.get(..8) else {
        return Vec::new();
    };
    let Some(hm) = clock.get(..5) else {
        return Vec::new();
    };
    let mut out = vec![
        format!("{date}t{clock}Z"),
        format!("{date}T{clock}z"),
        format!("{date} {clock}Z"),
        format!("{date}T{hm}:60Z"),
        format!("{date}T{clock}.1234567890Z"),
        format!("{date}T{clock},5Z"),
        format!("{date}T{clock}+0000"),
        format!("{date}T{clock}+00"),
        format!("{date}T{hm}Z"),
        format!("{date}T{clock}"),
    ];
    out.retain(|s| s != text);
    out.into_iter().map(Value::String).collect()
}

/// Why a newly admitted value stays out: the table that does not list it.
fn table_note(role: &Role, value: Option<&Value>) -> String {
    match (role, value) {
        (Role::Mapped { table, field, .. }, Some(v)) if !table.is_empty() && !table.contains(v) => {
            format!(" (the mapping's table for data.{field} does not list it)")
        }
        _ => String::new(),
    }
}

/// A value for a detail, cut short.
fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::time_spellings;
    use serde_json::json;

    /// A hostile fixture's time with a multi-byte character where the spellings are cut:
    /// no spellings, no panic (found in review).
    #[test]
    fn a_time_with_a_multi_byte_character_gives_no_spellings() {
        assert!(time_spellings(Some(&json!("2026-01-01T12:3\u{e9}:00Z"))).is_empty());
        assert!(time_spellings(Some(&json!("2026-01-01T1\u{e9}"))).is_empty());
        assert!(!time_spellings(Some(&json!("2026-01-01T12:30:00Z"))).is_empty());
    }
}
