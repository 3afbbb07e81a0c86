//! The account statements, parsed by hand from their text (sqlparser knows only part of
//! MySQL's forms) and run against the [`Acl`]: CREATE / ALTER / DROP / RENAME USER,
//! SET PASSWORD, GRANT, REVOKE, SHOW GRANTS, SHOW CREATE USER, FLUSH PRIVILEGES; roles
//! (CREATE / DROP ROLE, GRANT / REVOKE role, SET ROLE, SET DEFAULT ROLE, ALTER USER …
//! DEFAULT ROLE, SHOW GRANTS … USING) and column grants (`GRANT SELECT (c) ON t`).
//! Routine-level grants are refused with 1235 naming them.
//!
//! Who may run them (MySQL's rules): account management needs the global CREATE USER
//! privilege (1227); GRANT needs GRANT OPTION and the granted privileges at the level
//! or above (1044 / 1142 / 1045 as MySQL answers); SHOW GRANTS FOR another account and
//! SET PASSWORD FOR another account need access to the `mysql` schema (1044).

use super::roles::{self, Name};
use super::store::{Account, Grant, Require};
use super::{now_secs, Acl, Effective, Identity};
use strata_types::privilege::{dynamic_named, Privs, DYNAMIC};
use strata_types::{Error, Result};

/// What a statement answers.
pub enum Reply {
    Ok(u64),
    /// One text column: its name and the rows.
    Rows(String, Vec<String>),
    /// SET ROLE: the roles the session has active from now on.
    SetRoles(Vec<Name>),
}

/// The session's side of the role statements: the roles active in it and the
/// `mandatory_roles` (granted to every account).
#[derive(Default)]
pub struct RoleCx {
    pub active: Vec<Name>,
    pub mandatory: Vec<Name>,
}

/// The first words that make a statement an account statement (after `CREATE` etc.),
/// so the session sends it here: None when it is not one.
pub fn is_account_statement(words: &[String]) -> bool {
    let w = |i: usize| {
        words
            .get(i)
            .map(|s| s.to_ascii_uppercase())
            .unwrap_or_default()
    };
    match w(0).as_str() {
        "CREATE" | "ALTER" | "DROP" => matches!(w(1).as_str(), "USER" | "ROLE"),
        "RENAME" => w(1) == "USER",
        "GRANT" | "REVOKE" => true,
        "SET" => matches!(w(1).as_str(), "PASSWORD" | "ROLE" | "DEFAULT"),
        "SHOW" => {
            w(1) == "GRANTS"
                || (w(1) == "CREATE" && w(2) == "USER")
                || (w(1) == "PRIVILEGES" && words.len() == 2)
        }
        "FLUSH" => w(1) == "PRIVILEGES",
        _ => false,
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    /// A quoted string or identifier ('…', "…", `…`).
    Quoted(String),
    Num(u64),
    Sym(char),
}

fn lex(sql: &str) -> Result<Vec<Tok>> {
    let mut out = Vec::new();
    let c: Vec<char> = sql.chars().collect();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch == '\'' || ch == '"' || ch == '`' {
            let mut s = String::new();
            i += 1;
            loop {
                match c.get(i) {
                    None => return Err(Error::Syntax(sql.chars().take(80).collect())),
                    Some(&q) if q == ch => {
                        if c.get(i + 1) == Some(&ch) {
                            s.push(ch);
                            i += 2;
                        } else {
                            i += 1;
                            break;
                        }
                    }
                    Some('\\') if ch != '`' => {
                        if let Some(&n) = c.get(i + 1) {
                            s.push(match n {
                                'n' => '\n',
                                't' => '\t',
                                '0' => '\0',
                                other => other,
                            });
                        }
                        i += 2;
                    }
                    Some(&o) => {
                        s.push(o);
                        i += 1;
                    }
                }
            }
            out.push(Tok::Quoted(s));
        } else if ch.is_ascii_digit() {
            let start = i;
            while i < c.len() && c[i].is_ascii_digit() {
                i += 1;
            }
            let text: String = c[start..i].iter().collect();
            out.push(Tok::Num(text.parse().map_err(|_| Error::Syntax(text))?));
        } else if ch.is_alphanumeric() || ch == '_' || ch == '$' {
            let start = i;
            // Host names and IPs unquoted (`u@localhost`, `u@10.0.0.%`) join their
            // dots and `%` here; the parser splits a `db.table` word itself.
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == '$') {
                i += 1;
            }
            out.push(Tok::Word(c[start..i].iter().collect()));
        } else if ch == ';' {
            i += 1;
        } else {
            out.push(Tok::Sym(ch));
            i += 1;
        }
    }
    Ok(out)
}

struct P {
    toks: Vec<Tok>,
    at: usize,
    current_db: Option<String>,
}

impl P {
    fn err(&self) -> Error {
        let rest: Vec<String> = self.toks[self.at.min(self.toks.len())..]
            .iter()
            .map(|t| match t {
                Tok::Word(w) => w.clone(),
                Tok::Quoted(q) => format!("'{q}'"),
                Tok::Num(n) => n.to_string(),
                Tok::Sym(c) => c.to_string(),
            })
            .collect();
        if rest.is_empty() {
            Error::Syntax(String::new())
        } else {
            Error::Syntax(rest.join(" ").chars().take(80).collect())
        }
    }
    fn peek_kw(&self, kw: &str) -> bool {
        matches!(self.toks.get(self.at), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(kw))
    }
    fn kw(&mut self, kw: &str) -> bool {
        if self.peek_kw(kw) {
            self.at += 1;
            true
        } else {
            false
        }
    }
    fn expect_kw(&mut self, kw: &str) -> Result<()> {
        if self.kw(kw) {
            Ok(())
        } else {
            Err(self.err())
        }
    }
    fn sym(&mut self, c: char) -> bool {
        if self.toks.get(self.at) == Some(&Tok::Sym(c)) {
            self.at += 1;
            true
        } else {
            false
        }
    }
    fn done(&self) -> bool {
        self.at >= self.toks.len()
    }
    fn end(&self) -> Result<()> {
        if self.done() {
            Ok(())
        } else {
            Err(self.err())
        }
    }
    fn string(&mut self) -> Result<String> {
        match self.toks.get(self.at) {
            Some(Tok::Quoted(s)) => {
                let s = s.clone();
                self.at += 1;
                Ok(s)
            }
            _ => Err(self.err()),
        }
    }
    fn num(&mut self) -> Result<u64> {
        match self.toks.get(self.at) {
            Some(Tok::Num(n)) => {
                let n = *n;
                self.at += 1;
                Ok(n)
            }
            _ => Err(self.err()),
        }
    }
    /// A name part: a word or a quoted identifier.
    fn name(&mut self) -> Result<String> {
        match self.toks.get(self.at) {
            Some(Tok::Word(w)) | Some(Tok::Quoted(w)) => {
                let w = w.clone();
                self.at += 1;
                Ok(w)
            }
            _ => Err(self.err()),
        }
    }

    /// A host written without quotes: words, numbers, `.`, `%`, `_`, `:`, `/`.
    fn bare_host(&mut self) -> Result<String> {
        let mut h = String::new();
        while let Some(t) = self.toks.get(self.at) {
            match t {
                Tok::Word(w) => h.push_str(w),
                Tok::Num(n) => h.push_str(&n.to_string()),
                Tok::Sym(c) if matches!(c, '.' | '%' | '-' | ':' | '/') => h.push(*c),
                _ => break,
            }
            self.at += 1;
        }
        if h.is_empty() {
            Err(self.err())
        } else {
            Ok(h)
        }
    }

    /// `'u'@'h'`, `u@h`, `'u'` (host `%`), CURRENT_USER[()]: (user, host).
    fn user(&mut self, who: &Identity) -> Result<(String, String)> {
        if self.kw("CURRENT_USER") {
            if self.sym('(') && !self.sym(')') {
                return Err(self.err());
            }
            return Ok((who.user.clone(), who.account_host.clone()));
        }
        let user = self.name()?;
        if self.sym('@') {
            let host = match self.toks.get(self.at) {
                Some(Tok::Quoted(h)) => {
                    let h = h.clone();
                    self.at += 1;
                    h
                }
                _ => self.bare_host()?,
            };
            return Ok((user, host.to_ascii_lowercase()));
        }
        Ok((user, "%".into()))
    }

    fn users(&mut self, who: &Identity) -> Result<Vec<(String, String)>> {
        let mut v = vec![self.user(who)?];
        while self.sym(',') {
            v.push(self.user(who)?);
        }
        Ok(v)
    }
}

fn quoted(u: &(String, String)) -> String {
    format!("'{}'@'{}'", u.0, u.1)
}

fn backquoted(user: &str, host: &str) -> String {
    format!(
        "`{}`@`{}`",
        user.replace('`', "``"),
        host.replace('`', "``")
    )
}

/// IDENTIFIED … and the account options of CREATE / ALTER USER.
#[derive(Default)]
struct Options {
    require: Option<Require>,
    max_user_connections: Option<u64>,
    lock: Option<bool>,
    expire: Option<bool>,
}

enum Credential {
    Clear(String),
    Hash(String),
}

fn plugin_name(p: &str) -> Result<String> {
    let l = p.to_ascii_lowercase();
    if l == super::strata_wire_plugins::NATIVE || l == super::strata_wire_plugins::SHA2 {
        Ok(l)
    } else {
        // 1524 in MySQL ("Plugin '%s' is not loaded"); refused by name here.
        Err(Error::NotSupported(format!("authentication plugin '{p}'")))
    }
}

/// An account and its IDENTIFIED clause, if any, as CREATE USER and ALTER USER list them.
type UserSpec = ((String, String), Option<(Option<String>, Credential)>);

/// `user [IDENTIFIED …] [, user [IDENTIFIED …]] …`
fn user_specs(p: &mut P, who: &Identity) -> Result<Vec<UserSpec>> {
    let mut specs = Vec::new();
    loop {
        let u = p.user(who)?;
        let auth = identified(p)?;
        specs.push((u, auth));
        if !p.sym(',') {
            return Ok(specs);
        }
    }
}

fn identified(p: &mut P) -> Result<Option<(Option<String>, Credential)>> {
    if !p.kw("IDENTIFIED") {
        return Ok(None);
    }
    if p.kw("BY") {
        if p.kw("RANDOM") {
            return Err(Error::NotSupported("IDENTIFIED BY RANDOM PASSWORD".into()));
        }
        return Ok(Some((None, Credential::Clear(p.string()?))));
    }
    p.expect_kw("WITH")?;
    let plugin = plugin_name(&p.name()?)?;
    if p.kw("BY") {
        return Ok(Some((Some(plugin), Credential::Clear(p.string()?))));
    }
    if p.kw("AS") {
        return Ok(Some((Some(plugin), Credential::Hash(p.string()?))));
    }
    Ok(Some((Some(plugin), Credential::Clear(String::new()))))
}

fn options(p: &mut P, o: &mut Options) -> Result<()> {
    loop {
        if p.kw("REQUIRE") {
            o.require = Some(if p.kw("NONE") {
                Require::None
            } else if p.kw("SSL") {
                Require::Ssl
            } else if p.kw("X509") {
                Require::X509
            } else {
                return Err(Error::NotSupported(
                    "REQUIRE ISSUER / SUBJECT / CIPHER".into(),
                ));
            });
        } else if p.kw("WITH") {
            let mut any = false;
            loop {
                if p.kw("MAX_USER_CONNECTIONS") {
                    o.max_user_connections = Some(p.num()?);
                } else if p.kw("MAX_QUERIES_PER_HOUR")
                    || p.kw("MAX_UPDATES_PER_HOUR")
                    || p.kw("MAX_CONNECTIONS_PER_HOUR")
                {
                    let n = p.num()?;
                    if n != 0 {
                        return Err(Error::NotSupported("MAX_*_PER_HOUR resource limits".into()));
                    }
                } else {
                    break;
                }
                any = true;
            }
            if !any {
                return Err(p.err());
            }
        } else if p.kw("ACCOUNT") {
            o.lock = Some(if p.kw("LOCK") {
                true
            } else {
                p.expect_kw("UNLOCK")?;
                false
            });
        } else if p.kw("PASSWORD") {
            p.expect_kw("EXPIRE")?;
            if p.kw("DEFAULT") {
                o.expire.get_or_insert(false);
            } else if p.kw("NEVER") || p.kw("INTERVAL") {
                return Err(Error::NotSupported(
                    "PASSWORD EXPIRE NEVER / INTERVAL".into(),
                ));
            } else {
                o.expire = Some(true);
            }
        } else {
            return p.end();
        }
    }
}

/// The stored credential for `cred` under `plugin`.
fn credential(plugin: &str, cred: &Credential) -> Result<String> {
    use super::strata_wire_plugins::NATIVE;
    Ok(match cred {
        Credential::Clear(pw) if plugin == NATIVE => hash_native(pw),
        Credential::Clear(pw) => hash_sha2(pw),
        Credential::Hash(h) => {
            let ok = h.is_empty()
                || (plugin == NATIVE && h.len() == 41 && h.starts_with('*'))
                || (plugin != NATIVE && h.starts_with("$A$") && h.len() == 70);
            if !ok {
                // 1827 in MySQL: the hash is not in the plugin's form.
                return Err(Error::NotSupported(format!(
                    "IDENTIFIED WITH {plugin} AS a value not in its stored form"
                )));
            }
            h.clone()
        }
    })
}

fn hash_native(pw: &str) -> String {
    strata_types::credential::hash_native(pw)
}

fn hash_sha2(pw: &str) -> String {
    strata_types::credential::hash_sha2(pw)
}

/// Runs one account statement for session `who` (holding `eff`); `current_db` is
/// what `GRANT … ON *` and `ON t` mean.
// Each argument is one thing the session lends the statement; bundling them would only
// move the list into a struct built for this one call.
#[allow(clippy::too_many_arguments)]
pub fn run(
    acl: &Acl,
    who: &Identity,
    eff: &Effective,
    sql: &str,
    default_plugin: &str,
    current_db: Option<&str>,
    table_columns: &dyn Fn(&str, &str) -> Option<Vec<String>>,
    rcx: &RoleCx,
) -> Result<Reply> {
    let mut p = P {
        toks: lex(sql)?,
        at: 0,
        current_db: current_db.map(String::from),
    };
    let first = p.name()?.to_ascii_uppercase();
    match first.as_str() {
        "FLUSH" => {
            p.expect_kw("PRIVILEGES")?;
            p.end()?;
            need_global(eff, Privs::RELOAD, "RELOAD")?;
            acl.reload()?;
            Ok(Reply::Ok(0))
        }
        "SHOW" => show(&mut p, acl, who, eff, rcx),
        "CREATE" | "DROP" if p.kw("ROLE") => {
            create_or_drop_role(&mut p, first == "CREATE", acl, who, eff, rcx)
        }
        "ALTER" if has_default_role(&p) => {
            p.expect_kw("USER")?;
            let if_exists = p.kw("IF") && {
                p.expect_kw("EXISTS")?;
                true
            };
            let u = p.user(who)?;
            p.expect_kw("DEFAULT")?;
            p.expect_kw("ROLE")?;
            set_default_role(&mut p, acl, who, eff, vec![u], if_exists, rcx)
        }
        "CREATE" => {
            p.expect_kw("USER")?;
            need_global(eff, Privs::CREATE_USER, "CREATE USER")?;
            let if_not_exists = p.kw("IF") && {
                p.expect_kw("NOT")?;
                p.expect_kw("EXISTS")?;
                true
            };
            let specs = user_specs(&mut p, who)?;
            let mut o = Options::default();
            options(&mut p, &mut o)?;
            acl.change(|accounts| {
                let mut failed = Vec::new();
                for (u, auth) in &specs {
                    if accounts.iter().any(|a| a.user == u.0 && a.host == u.1) {
                        if !if_not_exists {
                            failed.push(quoted(u));
                        }
                        continue;
                    }
                    let (plugin, cred) = match auth {
                        Some((pl, c)) => (pl.clone().unwrap_or(default_plugin.into()), Some(c)),
                        None => (default_plugin.to_string(), None),
                    };
                    let auth_string = match cred {
                        Some(c) => credential(&plugin, c)?,
                        None => String::new(),
                    };
                    accounts.push(Account {
                        user: u.0.clone(),
                        host: u.1.clone(),
                        plugin,
                        auth_string,
                        password_last_changed: now_secs(),
                        password_expired: o.expire.unwrap_or(false),
                        locked: o.lock.unwrap_or(false),
                        require: o.require.unwrap_or_default(),
                        max_user_connections: o.max_user_connections.unwrap_or(0),
                        ..Default::default()
                    });
                }
                if !failed.is_empty() {
                    return Err(Error::AccountOperationFailed(
                        "CREATE USER".into(),
                        failed.join(","),
                    ));
                }
                Ok(())
            })?;
            Ok(Reply::Ok(0))
        }
        "ALTER" => {
            p.expect_kw("USER")?;
            let if_exists = p.kw("IF") && {
                p.expect_kw("EXISTS")?;
                true
            };
            let specs = user_specs(&mut p, who)?;
            let mut o = Options::default();
            options(&mut p, &mut o)?;
            // Changing one's own password needs no privilege; anything else does.
            let only_own_password = specs.len() == 1
                && specs[0].0 == (who.user.clone(), who.account_host.clone())
                && o.require.is_none()
                && o.lock.is_none()
                && o.max_user_connections.is_none();
            if !only_own_password {
                need_global(eff, Privs::CREATE_USER, "CREATE USER")?;
            }
            acl.change(|accounts| {
                let mut failed = Vec::new();
                for (u, auth) in &specs {
                    let Some(a) = accounts.iter_mut().find(|a| a.user == u.0 && a.host == u.1)
                    else {
                        if !if_exists {
                            failed.push(quoted(u));
                        }
                        continue;
                    };
                    if let Some((pl, c)) = auth {
                        let plugin = pl.clone().unwrap_or(a.plugin.clone());
                        a.auth_string = credential(&plugin, c)?;
                        a.plugin = plugin;
                        a.password_last_changed = now_secs();
                        a.password_expired = false;
                    }
                    if let Some(r) = o.require {
                        a.require = r;
                    }
                    if let Some(n) = o.max_user_connections {
                        a.max_user_connections = n;
                    }
                    if let Some(l) = o.lock {
                        a.locked = l;
                    }
                    if let Some(e) = o.expire {
                        a.password_expired = e;
                    }
                }
                if !failed.is_empty() {
                    return Err(Error::AccountOperationFailed(
                        "ALTER USER".into(),
                        failed.join(","),
                    ));
                }
                Ok(())
            })?;
            Ok(Reply::Ok(0))
        }
        "DROP" => {
            p.expect_kw("USER")?;
            need_global(eff, Privs::CREATE_USER, "CREATE USER")?;
            let if_exists = p.kw("IF") && {
                p.expect_kw("EXISTS")?;
                true
            };
            let users = p.users(who)?;
            p.end()?;
            for u in &users {
                refuse_mandatory(u, &rcx.mandatory)?;
            }
            acl.change(|accounts| {
                let mut failed = Vec::new();
                for u in &users {
                    let before = accounts.len();
                    accounts.retain(|a| !(a.user == u.0 && a.host == u.1));
                    if accounts.len() == before && !if_exists {
                        failed.push(quoted(u));
                    }
                    forget_role(accounts, u);
                }
                if !failed.is_empty() {
                    return Err(Error::AccountOperationFailed(
                        "DROP USER".into(),
                        failed.join(","),
                    ));
                }
                Ok(())
            })?;
            Ok(Reply::Ok(0))
        }
        "RENAME" => {
            p.expect_kw("USER")?;
            need_global(eff, Privs::CREATE_USER, "CREATE USER")?;
            let mut pairs = Vec::new();
            loop {
                let from = p.user(who)?;
                p.expect_kw("TO")?;
                let to = p.user(who)?;
                pairs.push((from, to));
                if !p.sym(',') {
                    break;
                }
            }
            p.end()?;
            acl.change(|accounts| {
                let mut failed = Vec::new();
                for (from, to) in &pairs {
                    let exists = |a: &Account, u: &(String, String)| a.user == u.0 && a.host == u.1;
                    if accounts.iter().any(|a| exists(a, to)) {
                        failed.push(quoted(from));
                        continue;
                    }
                    match accounts.iter_mut().find(|a| exists(a, from)) {
                        Some(a) => {
                            a.user = to.0.clone();
                            a.host = to.1.clone();
                        }
                        None => {
                            failed.push(quoted(from));
                            continue;
                        }
                    }
                    // Where the account is granted as a role (`role_edges`) or is a
                    // default role (`default_roles`), the new name follows, as MySQL 8
                    // renames those rows; its own roles move with it.
                    rename_role(accounts, from, to);
                }
                if !failed.is_empty() {
                    return Err(Error::AccountOperationFailed(
                        "RENAME USER".into(),
                        failed.join(","),
                    ));
                }
                Ok(())
            })?;
            Ok(Reply::Ok(0))
        }
        "SET" => {
            if p.kw("ROLE") {
                return set_role(&mut p, acl, who, rcx);
            }
            if p.kw("DEFAULT") {
                p.expect_kw("ROLE")?;
                return set_default_role_to(&mut p, acl, who, eff, rcx);
            }
            p.expect_kw("PASSWORD")?;
            let target = if p.kw("FOR") {
                p.user(who)?
            } else {
                (who.user.clone(), who.account_host.clone())
            };
            if !p.sym('=') {
                return Err(p.err());
            }
            let pw = p.string()?;
            p.end()?;
            if target != (who.user.clone(), who.account_host.clone())
                && !eff.has_global(Privs::CREATE_USER)
            {
                return Err(Error::DbAccessDenied {
                    user: who.user.clone(),
                    host: who.client_host.clone(),
                    db: "mysql".into(),
                });
            }
            acl.change(|accounts| {
                let a = accounts
                    .iter_mut()
                    .find(|a| a.user == target.0 && a.host == target.1)
                    .ok_or(Error::NoMatchingUser)?;
                a.auth_string = credential(&a.plugin, &Credential::Clear(pw.clone()))?;
                a.password_last_changed = now_secs();
                a.password_expired = false;
                Ok(())
            })?;
            Ok(Reply::Ok(0))
        }
        "GRANT" | "REVOKE"
            if !p
                .toks
                .iter()
                .any(|t| matches!(t, Tok::Word(w) if w.eq_ignore_ascii_case("ON"))) =>
        {
            grant_or_revoke_roles(&mut p, first == "GRANT", acl, who, eff, rcx)
        }
        "GRANT" | "REVOKE" => {
            grant_or_revoke(&mut p, first == "GRANT", acl, who, eff, table_columns)
        }
        _ => Err(p.err()),
    }
}

/// Removes every grant of role `r` (a dropped role or account), as MySQL deletes its
/// `role_edges` and `default_roles` rows.
fn forget_role(accounts: &mut [Account], r: &Name) {
    for a in accounts.iter_mut() {
        a.roles.remove(r);
        a.default_roles.remove(r);
    }
}

/// Renames role `from` to `to` wherever it is granted or a default role, keeping each
/// grant's WITH ADMIN OPTION.
fn rename_role(accounts: &mut [Account], from: &Name, to: &Name) {
    for a in accounts.iter_mut() {
        if let Some(admin) = a.roles.remove(from) {
            a.roles.insert(to.clone(), admin);
        }
        if a.default_roles.remove(from) {
            a.default_roles.insert(to.clone());
        }
    }
}

/// 3628 when `r` is one of `mandatory_roles` (it can be neither revoked nor dropped).
fn refuse_mandatory(r: &Name, mandatory: &[Name]) -> Result<()> {
    if mandatory
        .iter()
        .any(|m| m.0 == r.0 && m.1.eq_ignore_ascii_case(&r.1))
    {
        return Err(Error::MandatoryRole(roles::backquoted(r)));
    }
    Ok(())
}

/// `ALTER USER u DEFAULT ROLE …` (rather than ALTER USER's account options).
fn has_default_role(p: &P) -> bool {
    p.toks.windows(2).any(|w| {
        matches!((&w[0], &w[1]), (Tok::Word(a), Tok::Word(b))
            if a.eq_ignore_ascii_case("DEFAULT") && b.eq_ignore_ascii_case("ROLE"))
    })
}

/// CREATE ROLE [IF NOT EXISTS] r, … / DROP ROLE [IF EXISTS] r, …: a role is an account
/// that cannot log in (locked, password expired), as MySQL 8 creates it.
fn create_or_drop_role(
    p: &mut P,
    create: bool,
    acl: &Acl,
    who: &Identity,
    eff: &Effective,
    rcx: &RoleCx,
) -> Result<Reply> {
    let (mine, label) = if create {
        (Privs::CREATE_ROLE, "CREATE USER, CREATE ROLE")
    } else {
        (Privs::DROP_ROLE, "CREATE USER, DROP ROLE")
    };
    if !eff.has_global(mine) && !eff.has_global(Privs::CREATE_USER) {
        return Err(Error::SpecificAccessDenied(label.into()));
    }
    let if_clause = p.kw("IF") && {
        if create {
            p.expect_kw("NOT")?;
        }
        p.expect_kw("EXISTS")?;
        true
    };
    let names = p.users(who)?;
    p.end()?;
    if !create {
        for r in &names {
            refuse_mandatory(r, &rcx.mandatory)?;
        }
    }
    let op = if create { "CREATE ROLE" } else { "DROP ROLE" };
    acl.change(|accounts| {
        let mut failed = Vec::new();
        for r in &names {
            let exists = accounts.iter().any(|a| a.user == r.0 && a.host == r.1);
            if create {
                if exists {
                    if !if_clause {
                        failed.push(quoted(r));
                    }
                    continue;
                }
                accounts.push(Account {
                    user: r.0.clone(),
                    host: r.1.clone(),
                    plugin: super::strata_wire_plugins::SHA2.into(),
                    password_last_changed: now_secs(),
                    password_expired: true,
                    locked: true,
                    ..Default::default()
                });
            } else {
                if !exists {
                    if !if_clause {
                        failed.push(quoted(r));
                    }
                    continue;
                }
                accounts.retain(|a| !(a.user == r.0 && a.host == r.1));
                forget_role(accounts, r);
            }
        }
        if !failed.is_empty() {
            return Err(Error::AccountOperationFailed(op.into(), failed.join(",")));
        }
        Ok(())
    })?;
    Ok(Reply::Ok(0))
}

/// Whether the session may grant or revoke `role`: ROLE_ADMIN (or SUPER), or the role
/// granted to its account WITH ADMIN OPTION.
fn may_administer(acl: &Acl, who: &Identity, eff: &Effective, role: &Name) -> bool {
    eff.has_dynamic("ROLE_ADMIN")
        || acl
            .account(&who.user, &who.account_host)
            .is_some_and(|a| a.roles.get(role) == Some(&true))
}

/// GRANT role, … TO account, … [WITH ADMIN OPTION] / REVOKE role, … FROM account, ….
fn grant_or_revoke_roles(
    p: &mut P,
    grant: bool,
    acl: &Acl,
    who: &Identity,
    eff: &Effective,
    rcx: &RoleCx,
) -> Result<Reply> {
    let role_names = p.users(who)?;
    p.expect_kw(if grant { "TO" } else { "FROM" })?;
    let grantees = p.users(who)?;
    let mut admin = false;
    if grant && p.kw("WITH") {
        p.expect_kw("ADMIN")?;
        p.expect_kw("OPTION")?;
        admin = true;
    }
    p.end()?;
    if !role_names.iter().all(|r| may_administer(acl, who, eff, r)) {
        return Err(Error::SpecificAccessDenied(
            "WITH ADMIN, ROLE_ADMIN, SUPER".into(),
        ));
    }
    if !grant {
        for r in &role_names {
            refuse_mandatory(r, &rcx.mandatory)?;
        }
    }
    acl.change(|accounts| {
        let exists = |accounts: &[Account], u: &Name| {
            accounts.iter().any(|a| a.user == u.0 && a.host == u.1)
        };
        // The grantees are looked for first, then the roles (MySQL's order).
        for u in grantees.iter().chain(&role_names) {
            if !exists(accounts, u) {
                return Err(Error::UnknownAuthId(u.0.clone(), u.1.clone()));
            }
        }
        for u in &grantees {
            for r in &role_names {
                if grant {
                    if u == r || roles::reaches(accounts, r, u) {
                        return Err(Error::RoleGrantedToItself(
                            roles::backquoted(u),
                            roles::backquoted(r),
                        ));
                    }
                    if let Some(a) = accounts.iter_mut().find(|a| a.user == u.0 && a.host == u.1) {
                        let e = a.roles.entry(r.clone()).or_insert(false);
                        *e |= admin;
                    }
                } else if let Some(a) = accounts.iter_mut().find(|a| a.user == u.0 && a.host == u.1)
                {
                    if a.roles.remove(r).is_none() {
                        return Err(Error::RoleNotGranted(
                            r.0.clone(),
                            r.1.clone(),
                            u.0.clone(),
                            u.1.clone(),
                        ));
                    }
                    a.default_roles.remove(r);
                }
            }
        }
        Ok(())
    })?;
    Ok(Reply::Ok(0))
}

/// The role list of SET ROLE / SET DEFAULT ROLE: NONE, ALL [EXCEPT r, …], DEFAULT
/// (SET ROLE only) or r, ….
enum RoleSpec {
    None,
    All(Vec<Name>),
    Default,
    List(Vec<Name>),
}

fn role_spec(p: &mut P, who: &Identity, default_allowed: bool) -> Result<RoleSpec> {
    if p.kw("NONE") {
        return Ok(RoleSpec::None);
    }
    if default_allowed && p.kw("DEFAULT") {
        return Ok(RoleSpec::Default);
    }
    if p.kw("ALL") {
        let except = if p.kw("EXCEPT") {
            p.users(who)?
        } else {
            Vec::new()
        };
        return Ok(RoleSpec::All(except));
    }
    Ok(RoleSpec::List(p.users(who)?))
}

/// SET ROLE …: the roles to activate, each granted to the account (or mandatory),
/// else 3530.
fn set_role(p: &mut P, acl: &Acl, who: &Identity, rcx: &RoleCx) -> Result<Reply> {
    let spec = role_spec(p, who, true)?;
    p.end()?;
    let a = acl
        .account(&who.user, &who.account_host)
        .ok_or(Error::NoMatchingUser)?;
    let granted = roles::at_login(&a, &rcx.mandatory, true);
    let active = match spec {
        RoleSpec::None => Vec::new(),
        RoleSpec::Default => a.default_roles.iter().cloned().collect(),
        RoleSpec::All(except) => granted
            .into_iter()
            .filter(|r| !except.contains(r))
            .collect(),
        RoleSpec::List(list) => {
            for r in &list {
                if !granted.contains(r) {
                    return Err(Error::RoleNotGranted(
                        r.0.clone(),
                        r.1.clone(),
                        who.user.clone(),
                        who.account_host.clone(),
                    ));
                }
            }
            list
        }
    };
    Ok(Reply::SetRoles(active))
}

/// SET DEFAULT ROLE … TO account, ….
fn set_default_role_to(
    p: &mut P,
    acl: &Acl,
    who: &Identity,
    eff: &Effective,
    rcx: &RoleCx,
) -> Result<Reply> {
    // The role list ends at TO; parse it from a copy of the tokens after TO.
    let to_at = p.toks[p.at..]
        .iter()
        .position(|t| matches!(t, Tok::Word(w) if w.eq_ignore_ascii_case("TO")))
        .map(|i| p.at + i)
        .ok_or_else(|| p.err())?;
    let mut users_p = P {
        toks: p.toks[to_at + 1..].to_vec(),
        at: 0,
        current_db: None,
    };
    let users = users_p.users(who)?;
    users_p.end()?;
    p.toks.truncate(to_at);
    set_default_role(p, acl, who, eff, users, false, rcx)
}

/// Stores the default roles of `users` (SET DEFAULT ROLE, ALTER USER … DEFAULT ROLE):
/// one's own without privileges, anyone's with CREATE USER; each role must be granted
/// to the account (3530). ALL stores the roles granted now, as MySQL does.
fn set_default_role(
    p: &mut P,
    acl: &Acl,
    who: &Identity,
    eff: &Effective,
    users: Vec<Name>,
    if_exists: bool,
    rcx: &RoleCx,
) -> Result<Reply> {
    let spec = role_spec(p, who, false)?;
    p.end()?;
    let me = (who.user.clone(), who.account_host.clone());
    if users.iter().any(|u| *u != me) && !eff.has_global(Privs::CREATE_USER) {
        return Err(Error::SpecificAccessDenied("CREATE USER".into()));
    }
    acl.change(|accounts| {
        for u in &users {
            let Some(a) = accounts.iter_mut().find(|a| a.user == u.0 && a.host == u.1) else {
                if if_exists {
                    continue;
                }
                return Err(Error::UnknownAuthId(u.0.clone(), u.1.clone()));
            };
            let granted = roles::at_login(a, &rcx.mandatory, true);
            a.default_roles = match &spec {
                RoleSpec::None | RoleSpec::Default => Default::default(),
                RoleSpec::All(except) => granted
                    .into_iter()
                    .filter(|r| !except.contains(r))
                    .collect(),
                RoleSpec::List(list) => {
                    for r in list {
                        if !granted.contains(r) {
                            return Err(Error::RoleNotGranted(
                                r.0.clone(),
                                r.1.clone(),
                                u.0.clone(),
                                u.1.clone(),
                            ));
                        }
                    }
                    list.iter().cloned().collect()
                }
            };
        }
        Ok(())
    })?;
    Ok(Reply::Ok(0))
}

fn need_global(eff: &Effective, p: Privs, name: &str) -> Result<()> {
    if eff.has_global(p) {
        Ok(())
    } else {
        Err(Error::SpecificAccessDenied(name.to_string()))
    }
}

/// The level of a GRANT / REVOKE: `*.*`, `db.*` (or `*` with a current database), or
/// `db.t` / `t`.
#[derive(Clone, Debug, PartialEq)]
enum Level {
    Global,
    Db(String),
    Table(String, String),
}

fn level(p: &mut P, current: Option<&str>) -> Result<Level> {
    if p.kw("PROCEDURE") || p.kw("FUNCTION") {
        return Err(Error::NotSupported("routine-level privileges".into()));
    }
    p.kw("TABLE");
    let first = if p.sym('*') { None } else { Some(p.name()?) };
    if p.sym('.') {
        let second = if p.sym('*') { None } else { Some(p.name()?) };
        return match (first, second) {
            (None, None) => Ok(Level::Global),
            (Some(db), None) => Ok(Level::Db(db)),
            (Some(db), Some(t)) => Ok(Level::Table(db, t)),
            (None, Some(_)) => Err(p.err()),
        };
    }
    let db = current.ok_or(Error::NoDatabaseSelected)?.to_string();
    Ok(match first {
        None => Level::Db(db),
        Some(t) => Level::Table(db, t),
    })
}

/// Column privileges named in a GRANT / REVOKE: (privilege, columns).
type ColumnPrivs = Vec<(Privs, Vec<String>)>;

/// What a privilege list names.
struct PrivList {
    privs: Privs,
    dynamic: Vec<&'static str>,
    all: bool,
    grant_option: bool,
    columns: ColumnPrivs,
}

/// The privilege list: static privileges, `ALL [PRIVILEGES]`, `USAGE`, dynamic ones,
/// `GRANT OPTION` (REVOKE), and column privileges `SELECT (a, b)`.
fn privilege_list(p: &mut P) -> Result<PrivList> {
    let mut l = PrivList {
        privs: Privs::NONE,
        dynamic: Vec::new(),
        all: false,
        grant_option: false,
        columns: Vec::new(),
    };
    loop {
        let w = p.name()?.to_ascii_uppercase();
        let two = |p: &mut P, second: &str| p.kw(second);
        let mut this = Privs::NONE;
        match w.as_str() {
            "ALL" => {
                p.kw("PRIVILEGES");
                l.all = true;
            }
            "USAGE" => {}
            "GRANT" => {
                p.expect_kw("OPTION")?;
                l.grant_option = true;
            }
            "SHOW" if two(p, "DATABASES") => this = Privs::SHOW_DATABASES,
            "SHOW" if two(p, "VIEW") => this = Privs::SHOW_VIEW,
            "CREATE" | "DROP" | "ALTER" | "LOCK" | "REPLICATION" => {
                let mut name = w.clone();
                for second in [
                    "TEMPORARY",
                    "VIEW",
                    "ROUTINE",
                    "USER",
                    "TABLESPACE",
                    "ROLE",
                    "TABLES",
                    "SLAVE",
                    "CLIENT",
                ] {
                    if p.kw(second) {
                        name = format!("{name} {second}");
                        if second == "TEMPORARY" {
                            p.expect_kw("TABLES")?;
                            name.push_str(" TABLES");
                        }
                        break;
                    }
                }
                this = Privs::named(&name).ok_or_else(|| p.err())?;
            }
            other => match Privs::named(other) {
                Some(x) => this = x,
                None => match dynamic_named(other) {
                    Some(d) => l.dynamic.push(d),
                    None => return Err(p.err()),
                },
            },
        }
        if p.sym('(') {
            // A column list: only SELECT, INSERT, UPDATE and REFERENCES take one.
            if this.is_empty() || !Privs::COLUMN_ALL.contains(this) {
                return Err(Error::IllegalGrant);
            }
            let mut cols = vec![p.name()?];
            while p.sym(',') {
                cols.push(p.name()?);
            }
            if !p.sym(')') {
                return Err(p.err());
            }
            l.columns.push((this, cols));
        } else {
            l.privs = l.privs.union(this);
        }
        if !p.sym(',') {
            break;
        }
    }
    Ok(l)
}

fn grant_or_revoke(
    p: &mut P,
    grant: bool,
    acl: &Acl,
    who: &Identity,
    eff: &Effective,
    table_columns: &dyn Fn(&str, &str) -> Option<Vec<String>>,
) -> Result<Reply> {
    let PrivList {
        mut privs,
        dynamic,
        all,
        grant_option: grant_option_named,
        columns,
    } = privilege_list(p)?;
    p.expect_kw("ON")?;
    let current = p.current_db.clone();
    let lvl = level(p, current.as_deref())?;
    let users = if grant {
        p.expect_kw("TO")?;
        p.users(who)?
    } else {
        p.expect_kw("FROM")?;
        p.users(who)?
    };
    let mut with_grant = false;
    if grant && p.kw("WITH") {
        p.expect_kw("GRANT")?;
        p.expect_kw("OPTION")?;
        with_grant = true;
    }
    p.end()?;
    let level_all = match &lvl {
        Level::Global => Privs::GLOBAL_ALL,
        Level::Db(_) => Privs::DB_ALL,
        Level::Table(..) => Privs::TABLE_ALL,
    };
    if all {
        privs = privs.union(level_all);
    }
    if !privs.minus(level_all).is_empty() || (!dynamic.is_empty() && lvl != Level::Global) {
        return Err(match lvl {
            Level::Db(_) => Error::WrongUsage("DB GRANT".into(), "GLOBAL PRIVILEGES".into()),
            _ => Error::IllegalGrant,
        });
    }
    // A table grant names an existing table or view, unless it gives CREATE (MySQL's
    // rule: the grantee may then create it); a column grant names existing columns
    // (1054), stored as the table spells them.
    let mut col_grants: Vec<(Privs, String)> = Vec::new();
    if let Level::Table(db, t) = &lvl {
        let table_cols = table_columns(db, t);
        let needs_table = (grant && !privs.contains(Privs::CREATE)) || !columns.is_empty();
        if needs_table && table_cols.is_none() {
            return Err(Error::NoSuchTable {
                db: db.clone(),
                table: t.clone(),
            });
        }
        let table_cols = table_cols.unwrap_or_default();
        for (priv_, cols) in &columns {
            for c in cols {
                let Some(name) = table_cols.iter().find(|x| x.eq_ignore_ascii_case(c)) else {
                    return Err(Error::UnknownColumn {
                        column: c.clone(),
                        context: t.clone(),
                    });
                };
                col_grants.push((*priv_, name.clone()));
            }
        }
    } else if !columns.is_empty() {
        return Err(Error::IllegalGrant);
    }
    let column_privs = columns
        .iter()
        .fold(Privs::NONE, |acc, (p, _)| acc.union(*p));
    // The grantor needs GRANT OPTION and the privileges at this level or above.
    let snapshot = acl.account(&who.user, &who.account_host);
    let may = snapshot
        .as_ref()
        .is_some_and(|a| grantor_holds(a, &lvl, privs.union(column_privs)));
    if !may {
        return Err(match &lvl {
            Level::Global => Error::AccessDenied {
                user: who.user.clone(),
                host: who.client_host.clone(),
                using_password: true,
            },
            Level::Db(db) => Error::DbAccessDenied {
                user: who.user.clone(),
                host: who.client_host.clone(),
                db: db.clone(),
            },
            Level::Table(_, t) => Error::TableAccessDenied {
                command: if grant { "GRANT" } else { "REVOKE" }.into(),
                user: who.user.clone(),
                host: who.client_host.clone(),
                table: t.clone(),
            },
        });
    }
    let _ = eff;
    let all_dynamic: Vec<&str> = if all && lvl == Level::Global {
        DYNAMIC.to_vec()
    } else {
        dynamic.clone()
    };
    acl.change(|accounts| {
        for u in &users {
            let Some(a) = accounts.iter_mut().find(|a| a.user == u.0 && a.host == u.1) else {
                return Err(if grant {
                    Error::NoImplicitUserCreation
                } else {
                    Error::NoSuchGrant {
                        user: u.0.clone(),
                        host: u.1.clone(),
                    }
                });
            };
            // tables_priv's Grantor and Timestamp: who changed the table's grants last.
            if let Level::Table(db, t) = &lvl {
                a.grant_meta.insert(
                    (db.clone(), t.clone()),
                    super::store::GrantMeta {
                        grantor: format!("{}@{}", who.user, who.account_host),
                        timestamp: now_secs(),
                    },
                );
            }
            if grant {
                if let Level::Table(db, t) = &lvl {
                    for (p, c) in &col_grants {
                        let e = a
                            .columns
                            .entry((db.clone(), t.clone()))
                            .or_default()
                            .entry(c.clone())
                            .or_default();
                        *e = e.union(*p);
                    }
                }
                if col_grants.is_empty() || !privs.is_empty() || all || with_grant {
                    let g = slot(a, &lvl);
                    g.privs = g.privs.union(privs);
                    g.grant_option |= with_grant || grant_option_named;
                }
                if lvl == Level::Global {
                    a.dynamic.extend(all_dynamic.iter().map(|d| d.to_string()));
                }
            } else {
                let mut had_columns = false;
                if let Level::Table(db, t) = &lvl {
                    let key = (db.clone(), t.clone());
                    had_columns = a.columns.contains_key(&key);
                    for (p, c) in &col_grants {
                        let held = a
                            .columns
                            .get_mut(&key)
                            .and_then(|cols| cols.get_mut(c))
                            .filter(|h| h.contains(*p));
                        let Some(h) = held else {
                            return Err(Error::NoSuchTableGrant {
                                user: u.0.clone(),
                                host: u.1.clone(),
                                table: t.clone(),
                            });
                        };
                        *h = h.minus(*p);
                    }
                    if all {
                        a.columns.remove(&key);
                    }
                    if !col_grants.is_empty() && privs.is_empty() && !all && !grant_option_named {
                        prune(a);
                        continue;
                    }
                }
                let had = match &lvl {
                    Level::Global => true,
                    Level::Db(db) => a.dbs.contains_key(db),
                    Level::Table(db, t) => {
                        a.tables.contains_key(&(db.clone(), t.clone())) || (all && had_columns)
                    }
                };
                if !had {
                    return Err(match &lvl {
                        Level::Table(_, t) => Error::NoSuchTableGrant {
                            user: u.0.clone(),
                            host: u.1.clone(),
                            table: t.clone(),
                        },
                        _ => Error::NoSuchGrant {
                            user: u.0.clone(),
                            host: u.1.clone(),
                        },
                    });
                }
                let g = slot(a, &lvl);
                g.privs = g.privs.minus(privs);
                if grant_option_named || all {
                    g.grant_option = false;
                }
                if lvl == Level::Global {
                    for d in &all_dynamic {
                        a.dynamic.remove(*d);
                    }
                }
                prune(a);
            }
        }
        Ok(())
    })?;
    Ok(Reply::Ok(0))
}

/// The grant record of `lvl` in `a`, created empty when missing.
fn slot<'a>(a: &'a mut Account, lvl: &Level) -> &'a mut Grant {
    match lvl {
        Level::Global => &mut a.global,
        Level::Db(db) => a.dbs.entry(db.clone()).or_default(),
        Level::Table(db, t) => a.tables.entry((db.clone(), t.clone())).or_default(),
    }
}

/// Drops database and table grants left empty by a REVOKE (MySQL deletes the row).
fn prune(a: &mut Account) {
    a.dbs.retain(|_, g| !g.privs.is_empty() || g.grant_option);
    a.tables
        .retain(|_, g| !g.privs.is_empty() || g.grant_option);
    for cols in a.columns.values_mut() {
        cols.retain(|_, p| !p.is_empty());
    }
    a.columns.retain(|_, cols| !cols.is_empty());
    let (tables, columns) = (&a.tables, &a.columns);
    a.grant_meta
        .retain(|k, _| tables.contains_key(k) || columns.contains_key(k));
}

/// Whether the account may grant `privs` at `lvl`: WITH GRANT OPTION at that level or
/// above, and every privilege held at that level or above.
fn grantor_holds(a: &Account, lvl: &Level, privs: Privs) -> bool {
    let mut have = Privs::NONE;
    let mut option = false;
    let mut add = |g: Option<&Grant>| {
        if let Some(g) = g {
            have = have.union(g.privs);
            option |= g.grant_option;
        }
    };
    add(Some(&a.global));
    match lvl {
        Level::Global => {}
        Level::Db(db) => add(a.dbs.get(db)),
        Level::Table(db, t) => {
            add(a.dbs.get(db));
            add(a.tables.get(&(db.clone(), t.clone())));
        }
    }
    option && have.contains(privs)
}

fn show(p: &mut P, acl: &Acl, who: &Identity, eff: &Effective, rcx: &RoleCx) -> Result<Reply> {
    if p.kw("PRIVILEGES") {
        return Err(Error::NotSupported("SHOW PRIVILEGES".into()));
    }
    if p.kw("CREATE") {
        p.expect_kw("USER")?;
        let u = p.user(who)?;
        p.end()?;
        if u != (who.user.clone(), who.account_host.clone())
            && !eff.on_db("mysql").contains(Privs::SELECT)
        {
            return Err(Error::DbAccessDenied {
                user: who.user.clone(),
                host: who.client_host.clone(),
                db: "mysql".into(),
            });
        }
        let a = acl
            .account(&u.0, &u.1)
            .ok_or_else(|| Error::AccountOperationFailed("SHOW CREATE USER".into(), quoted(&u)))?;
        return Ok(Reply::Rows(
            format!("CREATE USER for {}@{}", a.user, a.host),
            vec![show_create_user(&a)],
        ));
    }
    p.expect_kw("GRANTS")?;
    let me = (who.user.clone(), who.account_host.clone());
    // SHOW GRANTS of one's own account shows the roles active in the session merged
    // in, as MySQL 8 does; FOR … USING names the roles to merge.
    let (u, using, explicit_using) = if p.kw("FOR") {
        let u = p.user(who)?;
        if p.kw("USING") {
            (u, p.users(who)?, true)
        } else if u == me {
            (u, rcx.active.clone(), false)
        } else {
            (u, Vec::new(), false)
        }
    } else {
        (me.clone(), rcx.active.clone(), false)
    };
    p.end()?;
    if u != me && !eff.on_db("mysql").contains(Privs::SELECT) {
        return Err(Error::DbAccessDenied {
            user: who.user.clone(),
            host: who.client_host.clone(),
            db: "mysql".into(),
        });
    }
    let a = acl.account(&u.0, &u.1).ok_or_else(|| Error::NoSuchGrant {
        user: u.0.clone(),
        host: u.1.clone(),
    })?;
    let mut shown = a.clone();
    if !using.is_empty() {
        let granted = roles::at_login(&a, &rcx.mandatory, true);
        if explicit_using {
            for r in &using {
                if !granted.contains(r) {
                    return Err(Error::RoleNotGranted(
                        r.0.clone(),
                        r.1.clone(),
                        a.user.clone(),
                        a.host.clone(),
                    ));
                }
            }
        }
        let accounts = acl.snapshot();
        for r in roles::closure(&accounts, &using) {
            if let Some(ra) = accounts.iter().find(|x| x.user == r.0 && x.host == r.1) {
                merge_grants(&mut shown, ra);
            }
        }
    }
    Ok(Reply::Rows(
        format!("Grants for {}@{}", a.user, a.host),
        show_grants(&shown),
    ))
}

/// Adds the privileges of role `r` to `a` (SHOW GRANTS … USING).
fn merge_grants(a: &mut Account, r: &Account) {
    let both = |x: &mut Grant, y: &Grant| {
        x.privs = x.privs.union(y.privs);
        x.grant_option |= y.grant_option;
    };
    both(&mut a.global, &r.global);
    a.dynamic.extend(r.dynamic.iter().cloned());
    for (k, g) in &r.dbs {
        both(a.dbs.entry(k.clone()).or_default(), g);
    }
    for (k, g) in &r.tables {
        both(a.tables.entry(k.clone()).or_default(), g);
    }
    for (k, cols) in &r.columns {
        let t = a.columns.entry(k.clone()).or_default();
        for (c, p) in cols {
            let e = t.entry(c.clone()).or_default();
            *e = e.union(*p);
        }
    }
}

/// MySQL 8's SHOW GRANTS lines for `a`.
pub fn show_grants(a: &Account) -> Vec<String> {
    let to = backquoted(&a.user, &a.host);
    let opt = |g: bool| if g { " WITH GRANT OPTION" } else { "" };
    let list = |p: Privs, level_all: Privs, global: bool| {
        if p.is_empty() {
            "USAGE".to_string()
        } else if p == level_all && !global {
            "ALL PRIVILEGES".to_string()
        } else {
            p.names().join(", ")
        }
    };
    let mut out = vec![format!(
        "GRANT {} ON *.* TO {to}{}",
        list(a.global.privs, Privs::GLOBAL_ALL, true),
        opt(a.global.grant_option && !a.global.privs.is_empty())
    )];
    if !a.dynamic.is_empty() {
        let d: Vec<&str> = a.dynamic.iter().map(String::as_str).collect();
        out.push(format!(
            "GRANT {} ON *.* TO {to}{}",
            d.join(","),
            opt(a.global.grant_option)
        ));
    }
    for (db, g) in &a.dbs {
        out.push(format!(
            "GRANT {} ON `{}`.* TO {to}{}",
            list(g.privs, Privs::DB_ALL, false),
            db.replace('`', "``"),
            opt(g.grant_option)
        ));
    }
    // A table's line names its table privileges and, in the same privilege order, its
    // column privileges with their columns: `SELECT (`a`), INSERT ON `d`.`t``.
    let mut keys: Vec<&(String, String)> = a.tables.keys().chain(a.columns.keys()).collect();
    keys.sort();
    keys.dedup();
    let no_grant = Grant::default();
    for key in keys {
        let (db, t) = key;
        let g = a.tables.get(key).unwrap_or(&no_grant);
        let cols = a.columns.get(key);
        let text = match cols {
            Some(cols) if !cols.is_empty() => {
                let mut parts = Vec::new();
                for (_, name) in strata_types::privilege::NAMES {
                    let one = Privs::named(name).unwrap_or_default();
                    if g.privs.contains(one) {
                        parts.push(name.to_string());
                    } else if Privs::COLUMN_ALL.contains(one) {
                        let named: Vec<String> = cols
                            .iter()
                            .filter(|(_, p)| p.contains(one))
                            .map(|(c, _)| format!("`{}`", c.replace('`', "``")))
                            .collect();
                        if !named.is_empty() {
                            parts.push(format!("{name} ({})", named.join(", ")));
                        }
                    }
                }
                parts.join(", ")
            }
            _ => list(g.privs, Privs::TABLE_ALL, false),
        };
        out.push(format!(
            "GRANT {text} ON `{}`.`{}` TO {to}{}",
            db.replace('`', "``"),
            t.replace('`', "``"),
            opt(g.grant_option)
        ));
    }
    // Granted roles: one line without ADMIN OPTION, one with.
    for admin in [false, true] {
        let names: Vec<String> = a
            .roles
            .iter()
            .filter(|(_, adm)| **adm == admin)
            .map(|(r, _)| roles::backquoted(r))
            .collect();
        if !names.is_empty() {
            out.push(format!(
                "GRANT {} TO {to}{}",
                names.join(","),
                if admin { " WITH ADMIN OPTION" } else { "" }
            ));
        }
    }
    out
}

/// MySQL 8's SHOW CREATE USER text for `a`.
pub fn show_create_user(a: &Account) -> String {
    let mut s = format!(
        "CREATE USER {} IDENTIFIED WITH '{}'",
        backquoted(&a.user, &a.host),
        a.plugin
    );
    if !a.auth_string.is_empty() {
        s.push_str(&format!(" AS '{}'", a.auth_string.replace('\'', "''")));
    }
    s.push_str(match a.require {
        Require::None => " REQUIRE NONE",
        Require::Ssl => " REQUIRE SSL",
        Require::X509 => " REQUIRE X509",
    });
    if a.max_user_connections > 0 {
        s.push_str(&format!(
            " WITH MAX_USER_CONNECTIONS {}",
            a.max_user_connections
        ));
    }
    s.push_str(if a.password_expired {
        " PASSWORD EXPIRE"
    } else {
        " PASSWORD EXPIRE DEFAULT"
    });
    s.push_str(if a.locked {
        " ACCOUNT LOCK"
    } else {
        " ACCOUNT UNLOCK"
    });
    s.push_str(
        " PASSWORD HISTORY DEFAULT PASSWORD REUSE INTERVAL DEFAULT PASSWORD REQUIRE CURRENT DEFAULT",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (Acl, Identity, Effective) {
        let acl = Acl::default();
        acl.change(|v| {
            v.push(Account {
                user: "root".into(),
                host: "localhost".into(),
                plugin: "mysql_native_password".into(),
                global: Grant {
                    privs: Privs::GLOBAL_ALL,
                    grant_option: true,
                },
                ..Default::default()
            });
            Ok(())
        })
        .unwrap();
        let who = Identity {
            user: "root".into(),
            account_host: "localhost".into(),
            client_host: "localhost".into(),
        };
        let eff = acl.effective("root", "localhost", &[], &[]);
        (acl, who, eff)
    }

    /// Every table exists, with columns a, b and c.
    fn cols(_: &str, _: &str) -> Option<Vec<String>> {
        Some(vec!["a".into(), "b".into(), "c".into()])
    }

    fn run_ok(acl: &Acl, who: &Identity, eff: &Effective, sql: &str) -> Reply {
        run(
            acl,
            who,
            eff,
            sql,
            "caching_sha2_password",
            None,
            &cols,
            &RoleCx::default(),
        )
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The error number `sql` fails with.
    fn run_err(acl: &Acl, who: &Identity, eff: &Effective, sql: &str) -> Error {
        match run(acl, who, eff, sql, "x", None, &cols, &RoleCx::default()) {
            Ok(_) => panic!("{sql}: succeeded"),
            Err(e) => e,
        }
    }

    fn err_code(acl: &Acl, who: &Identity, eff: &Effective, sql: &str) -> u16 {
        run_err(acl, who, eff, sql).code()
    }

    fn rows(r: Reply) -> Vec<String> {
        match r {
            Reply::Rows(_, r) => r,
            Reply::Ok(_) | Reply::SetRoles(_) => panic!("no rows"),
        }
    }

    #[test]
    fn create_grant_show_revoke_drop() {
        let (acl, who, eff) = root();
        run_ok(&acl, &who, &eff, "CREATE USER 'app'@'%' IDENTIFIED BY 'pw'");
        let e = run_err(&acl, &who, &eff, "CREATE USER app");
        assert_eq!(e.code(), 1396);
        assert_eq!(e.to_string(), "Operation CREATE USER failed for 'app'@'%'");
        run_ok(&acl, &who, &eff, "CREATE USER IF NOT EXISTS app");
        run_ok(
            &acl,
            &who,
            &eff,
            "GRANT SELECT, INSERT ON shop.* TO app@'%'",
        );
        run_ok(&acl, &who, &eff, "GRANT UPDATE ON `shop`.`orders` TO 'app'");
        run_ok(
            &acl,
            &who,
            &eff,
            "GRANT ALL ON crm.* TO app WITH GRANT OPTION",
        );
        assert_eq!(
            rows(run_ok(&acl, &who, &eff, "SHOW GRANTS FOR app")),
            vec![
                "GRANT USAGE ON *.* TO `app`@`%`",
                "GRANT ALL PRIVILEGES ON `crm`.* TO `app`@`%` WITH GRANT OPTION",
                "GRANT SELECT, INSERT ON `shop`.* TO `app`@`%`",
                "GRANT UPDATE ON `shop`.`orders` TO `app`@`%`",
            ]
        );
        assert_eq!(
            err_code(&acl, &who, &eff, "GRANT SUPER ON shop.* TO app"),
            1221
        );
        assert_eq!(
            err_code(&acl, &who, &eff, "GRANT SELECT ON *.* TO nobody"),
            1410
        );
        assert_eq!(
            err_code(&acl, &who, &eff, "GRANT SELECT (nope) ON shop.t TO app"),
            1054
        );
        assert_eq!(
            err_code(&acl, &who, &eff, "GRANT DELETE (a) ON shop.t TO app"),
            1144
        );
        run_ok(&acl, &who, &eff, "REVOKE INSERT ON shop.* FROM app");
        run_ok(&acl, &who, &eff, "REVOKE UPDATE ON shop.orders FROM app");
        assert_eq!(
            err_code(&acl, &who, &eff, "REVOKE UPDATE ON shop.orders FROM app"),
            1147
        );
        assert_eq!(
            err_code(&acl, &who, &eff, "REVOKE SELECT ON other.* FROM app"),
            1141
        );
        let app = acl.account("app", "%").unwrap();
        assert_eq!(app.dbs["shop"].privs, Privs::SELECT);
        assert!(app.tables.is_empty());
        assert!(app.auth_string.starts_with("$A$005$"));
        let create = show_create_user(&app);
        assert!(
            create.starts_with(
                "CREATE USER `app`@`%` IDENTIFIED WITH 'caching_sha2_password' AS '$A$005$"
            ),
            "{create}"
        );
        run_ok(&acl, &who, &eff, "RENAME USER app TO app2@localhost");
        run_ok(&acl, &who, &eff, "DROP USER app2@localhost");
        let e = run_err(&acl, &who, &eff, "DROP USER app2@localhost");
        assert_eq!(
            e.to_string(),
            "Operation DROP USER failed for 'app2'@'localhost'"
        );
        run_ok(&acl, &who, &eff, "DROP USER IF EXISTS app2@localhost");
    }

    #[test]
    fn a_limited_account_is_refused() {
        let (acl, root_who, root_eff) = root();
        run_ok(&acl, &root_who, &root_eff, "CREATE USER u IDENTIFIED WITH mysql_native_password BY 'secret' REQUIRE SSL WITH MAX_USER_CONNECTIONS 2 ACCOUNT LOCK");
        let u = acl.account("u", "%").unwrap();
        assert_eq!(u.auth_string, "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7");
        assert_eq!(
            (u.require, u.max_user_connections, u.locked),
            (Require::Ssl, 2, true)
        );
        let who = Identity {
            user: "u".into(),
            account_host: "%".into(),
            client_host: "localhost".into(),
        };
        let eff = acl.effective("u", "%", &[], &[]);
        assert_eq!(err_code(&acl, &who, &eff, "CREATE USER v"), 1227);
        assert_eq!(
            err_code(&acl, &who, &eff, "GRANT SELECT ON db.* TO u"),
            1044
        );
        assert_eq!(
            err_code(&acl, &who, &eff, "SHOW GRANTS FOR root@localhost"),
            1044
        );
        assert_eq!(
            rows(run_ok(&acl, &who, &eff, "SHOW GRANTS")),
            vec!["GRANT USAGE ON *.* TO `u`@`%`"]
        );
        // Its own password needs no privilege.
        run_ok(&acl, &who, &eff, "SET PASSWORD = 'new'");
        run_ok(
            &acl,
            &who,
            &eff,
            "ALTER USER CURRENT_USER() IDENTIFIED BY 'newer'",
        );
    }

    #[test]
    fn roles_are_granted_activated_and_shown() {
        let (acl, who, eff) = root();
        run_ok(&acl, &who, &eff, "CREATE ROLE reader, 'writer'@'%'");
        assert_eq!(err_code(&acl, &who, &eff, "CREATE ROLE reader"), 1396);
        run_ok(&acl, &who, &eff, "CREATE ROLE IF NOT EXISTS reader");
        run_ok(&acl, &who, &eff, "CREATE USER u");
        run_ok(&acl, &who, &eff, "GRANT SELECT ON shop.* TO reader");
        run_ok(&acl, &who, &eff, "GRANT INSERT ON shop.t TO writer");
        run_ok(&acl, &who, &eff, "GRANT reader TO writer");
        run_ok(&acl, &who, &eff, "GRANT writer TO u WITH ADMIN OPTION");
        // writer reaches reader: granting writer to reader would loop.
        let e = run_err(&acl, &who, &eff, "GRANT writer TO reader");
        assert_eq!(e.code(), 4027);
        assert_eq!(
            e.to_string(),
            "User account `reader`@`%` is directly or indirectly granted to the role `writer`@`%`. The GRANT would create a loop"
        );
        let e = run_err(&acl, &who, &eff, "GRANT reader TO nobody");
        assert_eq!(e.to_string(), "Unknown authorization ID `nobody`@`%`");
        assert_eq!(
            rows(run_ok(&acl, &who, &eff, "SHOW GRANTS FOR u")),
            vec![
                "GRANT USAGE ON *.* TO `u`@`%`",
                "GRANT `writer`@`%` TO `u`@`%` WITH ADMIN OPTION"
            ]
        );
        assert_eq!(
            rows(run_ok(&acl, &who, &eff, "SHOW GRANTS FOR u USING writer")),
            vec![
                "GRANT USAGE ON *.* TO `u`@`%`",
                "GRANT SELECT ON `shop`.* TO `u`@`%`",
                "GRANT INSERT ON `shop`.`t` TO `u`@`%`",
                "GRANT `writer`@`%` TO `u`@`%` WITH ADMIN OPTION"
            ]
        );
        assert_eq!(
            err_code(&acl, &who, &eff, "SHOW GRANTS FOR u USING reader"),
            3530
        );
        // The session of u: SET ROLE checks what is granted.
        let u = Identity {
            user: "u".into(),
            account_host: "%".into(),
            client_host: "localhost".into(),
        };
        let ueff = acl.effective("u", "%", &[], &[]);
        assert!(!ueff.on_table("shop", "t").contains(Privs::SELECT));
        let set = |sql: &str| run(&acl, &u, &ueff, sql, "x", None, &cols, &RoleCx::default());
        match set("SET ROLE writer") {
            Ok(Reply::SetRoles(r)) => assert_eq!(r, vec![("writer".into(), "%".into())]),
            _ => panic!("SET ROLE writer"),
        }
        let e = set("SET ROLE reader").err().unwrap();
        assert_eq!(e.to_string(), "`reader`@`%` is not granted to `u`@`%`");
        assert!(matches!(set("SET ROLE NONE"), Ok(Reply::SetRoles(r)) if r.is_empty()));
        assert!(
            matches!(set("SET ROLE ALL EXCEPT writer"), Ok(Reply::SetRoles(r)) if r.is_empty())
        );
        let active = vec![("writer".to_string(), "%".to_string())];
        let with_role = acl.effective("u", "%", &active, &[]);
        assert!(
            with_role.on_table("shop", "x").contains(Privs::SELECT),
            "through reader"
        );
        assert!(with_role.on_table("shop", "t").contains(Privs::INSERT));
        // Default roles: own account without privileges; a role not granted is 3530.
        run_ok(&acl, &u, &ueff, "SET DEFAULT ROLE ALL TO u");
        assert_eq!(acl.account("u", "%").unwrap().default_roles.len(), 1);
        assert_eq!(
            err_code(&acl, &who, &eff, "ALTER USER u DEFAULT ROLE reader"),
            3530
        );
        run_ok(&acl, &who, &eff, "ALTER USER u DEFAULT ROLE NONE");
        assert!(acl.account("u", "%").unwrap().default_roles.is_empty());
        // u holds writer WITH ADMIN OPTION, so may grant it on, but not reader.
        run_ok(&acl, &u, &ueff, "GRANT writer TO root@localhost");
        assert_eq!(
            err_code(&acl, &u, &ueff, "GRANT reader TO root@localhost"),
            1227
        );
        // REVOKE, and a revoked role no longer counts even while active.
        run_ok(&acl, &who, &eff, "REVOKE writer FROM u");
        assert_eq!(err_code(&acl, &who, &eff, "REVOKE writer FROM u"), 3530);
        assert!(!acl
            .effective("u", "%", &active, &[])
            .on_table("shop", "t")
            .contains(Privs::INSERT));
        // A mandatory role counts as granted.
        assert!(acl
            .effective("u", "%", &active, &active)
            .on_table("shop", "t")
            .contains(Privs::INSERT));
        run_ok(&acl, &who, &eff, "DROP ROLE writer");
        assert!(acl.account("root", "localhost").unwrap().roles.is_empty());
        assert_eq!(err_code(&acl, &who, &eff, "DROP ROLE writer"), 1396);
        run_ok(&acl, &who, &eff, "DROP ROLE IF EXISTS writer");
    }

    #[test]
    fn rename_user_carries_role_grants_and_mandatory_roles_stay() {
        let (acl, who, eff) = root();
        for sql in [
            "CREATE ROLE r1, r2",
            "CREATE USER u",
            "GRANT r1 TO u WITH ADMIN OPTION",
            "GRANT r2 TO r1",
            "SET DEFAULT ROLE r1 TO u",
            "RENAME USER r1 TO r9, u TO w",
        ] {
            run_ok(&acl, &who, &eff, sql);
        }
        let n = |u: &str| (u.to_string(), "%".to_string());
        let w = acl.account("w", "%").expect("u renamed to w");
        assert_eq!(
            w.roles.get(&n("r9")),
            Some(&true),
            "the grant follows r1's new name"
        );
        assert!(w.default_roles.contains(&n("r9")));
        assert!(acl.account("r9", "%").unwrap().roles.contains_key(&n("r2")));
        assert!(acl.account("u", "%").is_none() && acl.account("r1", "%").is_none());

        let mandatory = RoleCx {
            active: vec![],
            mandatory: vec![n("r2")],
        };
        let with = |sql: &str| run(&acl, &who, &eff, sql, "x", None, &cols, &mandatory);
        for sql in ["REVOKE r2 FROM r9", "DROP ROLE r2", "DROP USER r2"] {
            let e = with(sql).err().unwrap_or_else(|| panic!("{sql} succeeded"));
            assert_eq!(e.code(), 3628, "{sql}");
            assert_eq!(
                e.to_string(),
                "The role `r2`@`%` is a mandatory role and can't be revoked or dropped. The restriction can be lifted by excluding the role identifier from the global variable mandatory_roles."
            );
        }
        assert!(acl.account("r9", "%").unwrap().roles.contains_key(&n("r2")));
        assert!(with("REVOKE r9 FROM w").is_ok(), "a role not in the list");
    }

    #[test]
    fn column_grants_are_stored_shown_and_revoked() {
        let (acl, who, eff) = root();
        run_ok(&acl, &who, &eff, "CREATE USER u");
        run_ok(
            &acl,
            &who,
            &eff,
            "GRANT INSERT, REFERENCES (B), SELECT (a, c) ON d.t TO u",
        );
        run_ok(&acl, &who, &eff, "GRANT UPDATE (c) ON d.t TO u");
        assert_eq!(
            rows(run_ok(&acl, &who, &eff, "SHOW GRANTS FOR u")),
            vec![
                "GRANT USAGE ON *.* TO `u`@`%`",
                "GRANT SELECT (`a`, `c`), INSERT, UPDATE (`c`), REFERENCES (`b`) ON `d`.`t` TO `u`@`%`"
            ]
        );
        let e = acl.effective("u", "%", &[], &[]);
        assert_eq!(e.column_grants("d", "t").unwrap()["a"], Privs::SELECT);
        run_ok(&acl, &who, &eff, "REVOKE SELECT (a) ON d.t FROM u");
        assert_eq!(
            err_code(&acl, &who, &eff, "REVOKE SELECT (a) ON d.t FROM u"),
            1147
        );
        run_ok(&acl, &who, &eff, "REVOKE INSERT ON d.t FROM u");
        assert_eq!(
            rows(run_ok(&acl, &who, &eff, "SHOW GRANTS FOR u")),
            vec![
                "GRANT USAGE ON *.* TO `u`@`%`",
                "GRANT SELECT (`c`), UPDATE (`c`), REFERENCES (`b`) ON `d`.`t` TO `u`@`%`"
            ]
        );
        run_ok(&acl, &who, &eff, "REVOKE ALL ON d.t FROM u");
        assert_eq!(
            rows(run_ok(&acl, &who, &eff, "SHOW GRANTS FOR u")),
            vec!["GRANT USAGE ON *.* TO `u`@`%`"]
        );
        assert_eq!(
            err_code(&acl, &who, &eff, "GRANT SELECT (a) ON d.* TO u"),
            1144
        );
    }
}
