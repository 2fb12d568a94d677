//! The integer expression of an `#if`/`#elif` (see [`super`]): tokens, macro expansion and
//! C's preprocessor arithmetic on 64-bit signed and unsigned values.

use super::super::lex::{Kind, Lexer, LineIndex};
use super::{Def, PpState, Undecided};

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    /// A value: the number and whether it is unsigned.
    Num(i128, bool),
    Ident(String),
    Op(&'static str),
    /// Something whose value clgroups cannot tell.
    Unknown(Undecided),
    /// Not a token of an `#if` expression.
    Bad,
}

const OPS: [&str; 25] = [
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "&", "^",
    "|", "!", "~", "?", ":", "(", ")", ",",
];

/// The most macro expansions and tokens one condition may take, and the deepest nesting of
/// macros or brackets.
const BUDGET: usize = 20_000;
const DEPTH: usize = 200;

/// The tokens of `text`, lexed by the crate's lexer ([`Lexer`]); adjacent punctuation
/// joins into the longest operator. A malformed text (an unterminated comment or literal)
/// is one bad token.
fn tokens(text: &str) -> Vec<Tok> {
    let lines = LineIndex::new(text);
    let mut lexer = Lexer::new(text, &lines);
    if lexer.run(false).is_err() {
        return vec![Tok::Bad];
    }
    let mut out = Vec::with_capacity(lexer.tokens.len());
    let mut toks = lexer.tokens.iter();
    while let Some(t) = toks.next() {
        let word = &text[t.span.clone()];
        out.push(match t.kind {
            Kind::Ident if word.is_ascii() => Tok::Ident(word.to_string()),
            Kind::Number => number(word),
            Kind::Literal => match word.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')) {
                Some(body) => character(body),
                None => Tok::Bad,
            },
            // No operator holds a comment's `/` or a space: its other bytes are the next
            // punctuation tokens.
            Kind::Punct => match OPS.iter().find(|op| text[t.span.start..].starts_with(*op)) {
                Some(op) => {
                    for _ in 1..op.len() {
                        toks.next();
                    }
                    Tok::Op(op)
                }
                None => Tok::Bad,
            },
            Kind::Ident => Tok::Bad,
        });
    }
    out
}

/// An integer literal with its `u`/`l` suffixes (a floating literal is malformed here).
fn number(word: &str) -> Tok {
    let lower = word.to_ascii_lowercase();
    let digits = lower.trim_end_matches(['u', 'l']);
    let unsigned = lower[digits.len()..].contains('u');
    let (radix, body) = if let Some(h) = digits.strip_prefix("0x") {
        (16, h)
    } else if let Some(h) = digits.strip_prefix("0b") {
        (2, h)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    match u64::from_str_radix(body, radix) {
        Ok(v) => Tok::Num(v as i128, unsigned || v > i64::MAX as u64),
        Err(_) => Tok::Bad,
    }
}

/// A character literal's value (plain characters and the simple escapes).
fn character(body: &str) -> Tok {
    let mut chars = body.chars();
    let v = match (chars.next(), chars.next(), chars.next()) {
        (Some(c), None, _) if c != '\\' => c as i128,
        (Some('\\'), Some(e), None) => match e {
            'n' => 10,
            't' => 9,
            'r' => 13,
            '0' => 0,
            'a' => 7,
            'b' => 8,
            'f' => 12,
            'v' => 11,
            '\\' | '\'' | '"' | '?' => e as i128,
            _ => return Tok::Bad,
        },
        _ => return Tok::Bad,
    };
    Tok::Num(v, false)
}

/// `toks` with `defined` decided and macros expanded (`hide`: the macros being expanded;
/// `work`: expansions so far).
fn expand(
    toks: &[Tok],
    state: &PpState,
    hide: &mut Vec<String>,
    work: &mut usize,
    out: &mut Vec<Tok>,
) {
    *work += 1;
    let mut i = 0;
    while i < toks.len() {
        if out.len() + *work > BUDGET || hide.len() > DEPTH {
            out.push(Tok::Unknown(Undecided::TooLarge));
            return;
        }
        let Tok::Ident(name) = &toks[i] else {
            out.push(toks[i].clone());
            i += 1;
            continue;
        };
        if name == "defined" {
            let (arg, next) = match (toks.get(i + 1), toks.get(i + 2), toks.get(i + 3)) {
                (Some(Tok::Ident(a)), ..) => (Some(a), i + 2),
                (Some(Tok::Op("(")), Some(Tok::Ident(a)), Some(Tok::Op(")"))) => (Some(a), i + 4),
                _ => (None, i + 1),
            };
            out.push(match arg.map(|a| (a, state.lookup(a))) {
                None => Tok::Bad,
                Some((a, Some(Def::Unknown))) => Tok::Unknown(Undecided::Macro(a.clone())),
                Some((_, Some(_))) => Tok::Num(1, false),
                Some((_, None)) => Tok::Num(0, false),
            });
            i = next;
            continue;
        }
        i += 1;
        if hide.contains(name) {
            out.push(Tok::Num(0, false)); // a macro's own name in its expansion: an identifier
            continue;
        }
        match state.lookup(name) {
            Some(Def::Object(body)) => {
                hide.push(name.clone());
                expand(&tokens(&body), state, hide, work, out);
                hide.pop();
            }
            Some(Def::Function) if toks.get(i) == Some(&Tok::Op("(")) => {
                // Its arguments are skipped: the call is unknown.
                let mut level = 0usize;
                while let Some(t) = toks.get(i) {
                    i += 1;
                    match t {
                        Tok::Op("(") => level += 1,
                        Tok::Op(")") if level <= 1 => break,
                        Tok::Op(")") => level -= 1,
                        _ => {}
                    }
                }
                out.push(Tok::Unknown(Undecided::FunctionLike(name.clone())));
            }
            Some(Def::Unknown) => out.push(Tok::Unknown(Undecided::Macro(name.clone()))),
            // Undefined names (and a function-like macro's name alone) are 0.
            Some(Def::Function) | None => out.push(Tok::Num(0, false)),
        }
    }
}

/// A value: the number (wrapped to 64 bits) and whether it is unsigned; or why it is unknown.
type Val = Result<(i128, bool), Undecided>;

fn wrap(v: i128, unsigned: bool) -> (i128, bool) {
    let bits = v as u64;
    match unsigned {
        true => (bits as i128, true),
        false => (bits as i64 as i128, false),
    }
}

fn truth(b: bool) -> Val {
    Ok((b as i128, false))
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
    depth: usize,
    malformed: bool,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn eat(&mut self, op: &str) -> bool {
        let hit = matches!(self.peek(), Some(Tok::Op(o)) if *o == op);
        self.at += hit as usize;
        hit
    }

    fn comma(&mut self) -> Val {
        let mut v = self.conditional();
        while self.eat(",") {
            v = self.conditional();
        }
        v
    }

    fn conditional(&mut self) -> Val {
        let c = self.binary(1);
        if !self.eat("?") {
            return c;
        }
        let yes = self.comma();
        if !self.eat(":") {
            self.malformed = true;
        }
        let no = self.conditional();
        let unsigned = matches!(yes, Ok((_, true))) || matches!(no, Ok((_, true)));
        let pick = |v: Val| v.map(|(v, _)| wrap(v, unsigned));
        match c {
            Ok((c, _)) if c != 0 => pick(yes),
            Ok(_) => pick(no),
            Err(_) if yes.is_ok() && yes == no => yes,
            Err(e) => Err(e),
        }
    }

    fn binary(&mut self, min: u8) -> Val {
        let mut lhs = self.unary();
        loop {
            let Some(Tok::Op(op)) = self.peek() else {
                return lhs;
            };
            let op = *op;
            let prec = match op {
                "*" | "/" | "%" => 10,
                "+" | "-" => 9,
                "<<" | ">>" => 8,
                "<" | ">" | "<=" | ">=" => 7,
                "==" | "!=" => 6,
                "&" => 5,
                "^" => 4,
                "|" => 3,
                "&&" => 2,
                "||" => 1,
                _ => return lhs,
            };
            if prec < min {
                return lhs;
            }
            self.at += 1;
            let rhs = self.binary(prec + 1);
            lhs = apply(op, lhs, rhs);
        }
    }

    fn unary(&mut self) -> Val {
        self.depth += 1;
        if self.depth > DEPTH {
            self.malformed = true;
            self.at = self.toks.len();
            return Err(Undecided::Malformed);
        }
        let tok = self.peek().cloned();
        self.at += 1;
        let v = match tok {
            Some(Tok::Num(v, u)) => Ok((v, u)),
            Some(Tok::Ident(_)) => Ok((0, false)),
            Some(Tok::Unknown(why)) => Err(why),
            Some(Tok::Op("(")) => {
                let v = self.comma();
                if !self.eat(")") {
                    self.malformed = true;
                }
                v
            }
            Some(Tok::Op(op @ ("+" | "-" | "~" | "!"))) => {
                let (v, u) = self.unary()?;
                match op {
                    "+" => Ok((v, u)),
                    "-" => Ok(wrap(v.wrapping_neg(), u)),
                    "~" => Ok(wrap(!v, u)),
                    _ => truth(v == 0),
                }
            }
            _ => {
                self.malformed = true;
                Err(Undecided::Malformed)
            }
        };
        self.depth -= 1;
        v
    }
}

/// Binary operator `op` with C's usual arithmetic conversions; `&&` and `||` are decided by
/// one known side where the other is unknown.
fn apply(op: &str, lhs: Val, rhs: Val) -> Val {
    match (op, &lhs, &rhs) {
        ("&&", Ok((0, _)), _) | ("&&", _, Ok((0, _))) => return truth(false),
        ("||", Ok((a, _)), _) if *a != 0 => return truth(true),
        ("||", _, Ok((b, _))) if *b != 0 => return truth(true),
        _ => {}
    }
    let ((a, au), (b, bu)) = (lhs?, rhs?);
    let u = au || bu;
    let (x, y) = (wrap(a, u).0, wrap(b, u).0);
    match op {
        "*" => Ok(wrap(x.wrapping_mul(y), u)),
        "/" | "%" if y == 0 => Err(Undecided::DivisionByZero),
        "/" => Ok(wrap(x / y, u)),
        "%" => Ok(wrap(x % y, u)),
        "+" => Ok(wrap(x + y, u)),
        "-" => Ok(wrap(x - y, u)),
        "<<" | ">>" if !(0..64).contains(&b) => Err(Undecided::ShiftOutOfRange),
        "<<" => Ok(wrap(((a as u64) << b) as i128, au)),
        ">>" if au => Ok(wrap(((a as u64) >> b) as i128, au)),
        ">>" => Ok(wrap(((a as i64) >> b) as i128, au)),
        "<" => truth(x < y),
        ">" => truth(x > y),
        "<=" => truth(x <= y),
        ">=" => truth(x >= y),
        "==" => truth(x == y),
        "!=" => truth(x != y),
        "&" => Ok(wrap(x & y, u)),
        "^" => Ok(wrap(x ^ y, u)),
        "|" => Ok(wrap(x | y, u)),
        "&&" | "||" => truth(op == "&&"),
        _ => Err(Undecided::Malformed),
    }
}

/// The value of `#if` expression `text` under `state`, or why it cannot be told (the macro it
/// depends on, or a reason).
pub(super) fn eval(text: &str, state: &PpState) -> Result<i128, Undecided> {
    let mut toks = Vec::new();
    expand(&tokens(text), state, &mut Vec::new(), &mut 0, &mut toks);
    if toks.contains(&Tok::Bad) {
        return Err(Undecided::Malformed);
    }
    let mut p = Parser {
        toks,
        at: 0,
        depth: 0,
        malformed: false,
    };
    let v = p.comma();
    if p.malformed || p.at != p.toks.len() {
        return Err(Undecided::Malformed);
    }
    v.map(|(v, _)| v)
}
