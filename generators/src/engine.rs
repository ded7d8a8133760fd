//! Placeholder: replaced by the real engine.
use crate::{Dialect, Invalid, SchemaError};
use proptest::strategy::BoxedStrategy;
use serde_json::Value;

pub(crate) struct Compiled;

impl Compiled {
    pub(crate) fn new(_schema: &Value) -> Result<Self, SchemaError> {
        todo!()
    }
    pub(crate) fn dialect(&self) -> Dialect {
        todo!()
    }
    pub(crate) fn notes(&self) -> &[String] {
        todo!()
    }
    pub(crate) fn is_valid(&self, _v: &Value) -> bool {
        todo!()
    }
    pub(crate) fn violations(&self, _v: &Value) -> Vec<(String, String)> {
        todo!()
    }
    pub(crate) fn valid_strategy(&self) -> Result<BoxedStrategy<Value>, SchemaError> {
        todo!()
    }
    pub(crate) fn invalid_strategy(&self) -> Result<BoxedStrategy<Invalid>, SchemaError> {
        todo!()
    }
    pub(crate) fn boundary(&self) -> Result<Vec<Value>, SchemaError> {
        todo!()
    }
    pub(crate) fn mutations(&self) -> Result<Vec<Invalid>, SchemaError> {
        todo!()
    }
}
