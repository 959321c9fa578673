//! A rule as the user gives it, checked before anything is stored.

use wyckoff_market::{MarketData, StockCode};
use wyckoff_protocol::{AlertCondition, AlertTarget};

/// The longest cooldown a rule may have (about a trading year).
pub const MAX_COOLDOWN_DAYS: u32 = 250;

/// A rule to add.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRule {
    pub target: AlertTarget,
    pub condition: AlertCondition,
    pub cooldown_days: u32,
}

/// What is wrong with a rule (nothing is stored).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RuleError {
    #[error("'{0}' is not an A-share code: use 6 digits, e.g. 600519, 600519.SH or sh600519")]
    BadCode(String),
    #[error("stock {0} is not in the stock list (see `wyckoff search`)")]
    UnknownCode(String),
    #[error("{what} must be a number greater than 0, got {value}")]
    NotPositive { what: &'static str, value: f64 },
    #[error("{what} must be a finite number, got {value}")]
    NotFinite { what: &'static str, value: f64 },
    #[error("unknown Wyckoff event '{0}': use one of {names}", names = event_names())]
    UnknownEvent(String),
    #[error("the cooldown is 1 to {MAX_COOLDOWN_DAYS} trading days, got {0}")]
    BadCooldown(u32),
    #[error(
        "a holding's stop-loss and target are checked from the portfolio without a rule: set them on the position (wyckoff portfolio levels CODE --stop X --target Y)"
    )]
    StopLossRule,
}

fn event_names() -> String {
    wyckoff_engine::alerts::EVENT_NAMES
        .into_iter()
        .map(wyckoff_engine::alerts::event_name)
        .collect::<Vec<_>>()
        .join(", ")
}

fn positive(what: &'static str, value: f64) -> Result<(), RuleError> {
    if !value.is_finite() {
        Err(RuleError::NotFinite { what, value })
    } else if value <= 0.0 {
        Err(RuleError::NotPositive { what, value })
    } else {
        Ok(())
    }
}

fn finite(what: &'static str, value: f64) -> Result<(), RuleError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(RuleError::NotFinite { what, value })
    }
}

/// Checks a rule and normalises it (the code to six digits, the event to the engine's
/// spelling). A stock code must be in the stock list `md` knows.
pub fn validate(md: &MarketData, rule: NewRule) -> Result<NewRule, RuleError> {
    let target = match rule.target {
        AlertTarget::Stock { code } => {
            let parsed = StockCode::parse(&code).map_err(|_| RuleError::BadCode(code.clone()))?;
            if md.stock_info(&parsed).is_none() {
                return Err(RuleError::UnknownCode(parsed.digits().to_string()));
            }
            AlertTarget::Stock {
                code: parsed.digits().to_string(),
            }
        }
        other => other,
    };
    let condition = match rule.condition {
        AlertCondition::PriceAbove { level } | AlertCondition::PriceBelow { level } => {
            positive("the price level", level)?;
            rule.condition
        }
        AlertCondition::ChangeAbove { pct } | AlertCondition::ChangeBelow { pct } => {
            finite("the change percentage", pct)?;
            rule.condition
        }
        AlertCondition::VolumeRatio { k } => {
            positive("the volume ratio", k)?;
            rule.condition
        }
        AlertCondition::Event { event: Some(name) } => {
            let e = wyckoff_engine::alerts::parse_event(&name)
                .ok_or_else(|| RuleError::UnknownEvent(name.trim().to_owned()))?;
            AlertCondition::Event {
                event: Some(wyckoff_engine::alerts::event_name(e)),
            }
        }
        AlertCondition::StopLoss | AlertCondition::TargetReached => {
            return Err(RuleError::StopLossRule);
        }
        AlertCondition::Event { event: None }
        | AlertCondition::PhaseChange
        | AlertCondition::HealthChange => rule.condition,
    };
    if !(1..=MAX_COOLDOWN_DAYS).contains(&rule.cooldown_days) {
        return Err(RuleError::BadCooldown(rule.cooldown_days));
    }
    Ok(NewRule {
        target,
        condition,
        cooldown_days: rule.cooldown_days,
    })
}
